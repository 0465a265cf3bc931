package kaffee.analytics

import java.time.LocalDate
import scala.concurrent.duration._
import scala.concurrent.{Await, ExecutionContext, Future}

/** Reads sales from the shop's reporting endpoint. Everything is a Future; only the
  * entry points (SalesReport.main) may block, with Await.result(future, timeout).
  */
class ShopClient(baseUrl: String, fetch: String => Future[String])(implicit ec: ExecutionContext) {

  def sales(day: LocalDate): Future[Seq[Sale]] =
    fetch(s"$baseUrl/reports/sales?day=$day").map(Csv.parseSales)

  def salesBetween(from: LocalDate, to: LocalDate): Future[Seq[Sale]] = {
    val days = Iterator.iterate(from)(_.plusDays(1)).takeWhile(!_.isAfter(to)).toSeq
    Future.traverse(days)(sales).map(_.flatten)
  }

  /** For the REPL only: blocks the caller. Do not use from the report jobs. */
  def salesNow(day: LocalDate): Seq[Sale] = Await.result(sales(day), 30.seconds)
}

object Csv {
  def parseSales(body: String): Seq[Sale] =
    body.linesIterator.drop(1).filter(_.nonEmpty).map { line =>
      line.split(';') match {
        case Array(order, day, sku, qty, cents) =>
          Sale(order, LocalDate.parse(day), sku, qty.toInt, cents.toLong)
        case other =>
          throw new IllegalArgumentException(s"bad sales row (${other.length} fields, no match): $line")
      }
    }.toSeq
}
