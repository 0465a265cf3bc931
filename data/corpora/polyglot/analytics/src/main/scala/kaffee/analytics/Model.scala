package kaffee.analytics

import java.time.LocalDate

final case class Sale(orderNumber: String, day: LocalDate, sku: String, quantity: Int, cents: Long)

sealed trait RoastLevel
object RoastLevel {
  case object Light extends RoastLevel
  case object Medium extends RoastLevel
  case object Dark extends RoastLevel
  case object Espresso extends RoastLevel

  // Parses the shop's roast_level field; unknown values fall back to Medium.
  def parse(s: String): RoastLevel = s.trim.toLowerCase match {
    case "light"    => Light
    case "medium"   => Medium
    case "dark"     => Dark
    case "espresso" => Espresso
    case _          => Medium
  }
}

final case class Batch(id: String, day: LocalDate, level: RoastLevel, greenKg: BigDecimal, roastedKg: BigDecimal) {
  // Weight loss during roasting; the filter below keeps only batches where this matches the spec.
  def shrinkage: BigDecimal = if (greenKg == 0) 0 else (greenKg - roastedKg) / greenKg
}
