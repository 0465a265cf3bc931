package kaffee.analytics

import java.time.LocalDate

/** Pure aggregations over sales and roast batches. No var and no mutable
  * collections in here: everything is a fold, so the reports are reproducible.
  */
object RoastAggregator {

  final case class DayTotal(day: LocalDate, bags: Int, cents: Long)

  def perDay(sales: Seq[Sale]): Seq[DayTotal] =
    sales
      .groupBy(_.day)
      .map { case (day, xs) => DayTotal(day, xs.map(_.quantity).sum, xs.map(_.cents).sum) }
      .toSeq
      .sortBy(_.day.toEpochDay)

  def kgPerLevel(batches: Seq[Batch]): Map[RoastLevel, BigDecimal] =
    batches.foldLeft(Map.empty[RoastLevel, BigDecimal]) { (acc, b) =>
      acc.updated(b.level, acc.getOrElse(b.level, BigDecimal(0)) + b.roastedKg)
    }

  /** Batches whose weight loss is outside the expected band for their roast level. */
  def outliers(batches: Seq[Batch]): Seq[Batch] =
    batches.filter { b =>
      val (lo, hi) = b.level match {
        case RoastLevel.Light    => (BigDecimal("0.11"), BigDecimal("0.14"))
        case RoastLevel.Medium   => (BigDecimal("0.13"), BigDecimal("0.16"))
        case RoastLevel.Dark | RoastLevel.Espresso =>
          (BigDecimal("0.15"), BigDecimal("0.20"))
      }
      b.shrinkage < lo || b.shrinkage > hi
    }

  def label(level: RoastLevel): String = level match {
    case RoastLevel.Light    => "Hell"
    case RoastLevel.Medium   => "Mittel"
    case RoastLevel.Dark     => "Dunkel"
    case RoastLevel.Espresso => "Espresso"
  }
}
