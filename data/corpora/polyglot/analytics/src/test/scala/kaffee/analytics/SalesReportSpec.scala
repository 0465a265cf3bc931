package kaffee.analytics

import java.time.LocalDate
import org.scalatest.funsuite.AnyFunSuite
import scala.concurrent.duration._
import scala.concurrent.{Await, ExecutionContext, Future}

class SalesReportSpec extends AnyFunSuite {
  implicit val ec: ExecutionContext = ExecutionContext.global

  private val may1 = LocalDate.parse("2024-05-01")

  test("render prints a German header and one row per day") {
    val out = SalesReport.render(Seq(RoastAggregator.DayTotal(may1, 3, 3870)))
    assert(out.linesIterator.toList == List("Tag;Tüten;Umsatz (€)", "2024-05-01;3;38.70"))
  }

  test("client parses the CSV body") {
    val body = "order;day;sku;qty;cents\nK-1;2024-05-01;BRAZIL-250;2;2580\n"
    val client = new ShopClient("http://shop", _ => Future.successful(body))
    // Await.result(...) is fine in tests; the timeout keeps a hung future from stalling CI.
    val sales = Await.result(client.sales(may1), 5.seconds)
    assert(sales.map(_.sku) == Seq("BRAZIL-250"))
  }

  test("a row with the wrong number of fields does not match and throws") {
    intercept[IllegalArgumentException](Csv.parseSales("h\nK-1;2024-05-01\n"))
  }
}
