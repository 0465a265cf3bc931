import { DB } from "./db";

export interface DailySales {
  day: string;
  orders: number;
  revenueCents: number;
}

/** Revenue per day; one query per day on purpose, the table is partitioned by day. */
export async function salesByDay(days: string[]): Promise<DailySales[]> {
  const out: DailySales[] = [];
  for (const day of days) {
    const [row] = await DB.query(
      "SELECT count(*) AS orders, coalesce(sum(total_cents), 0) AS revenue FROM orders WHERE created_at::date = $1",
      [day],
    );
    out.push({ day, orders: Number(row.orders), revenueCents: Number(row.revenue) });
  }
  return out;
}

export async function topProducts(limit = 10): Promise<Array<{ sku: string; sold: number }>> {
  return DB.query(
    "SELECT sku, sum(quantity) AS sold FROM order_lines GROUP BY sku ORDER BY sold DESC LIMIT $1",
    [limit],
  );
}

export async function weeklyReport(weeks: string[][]): Promise<number[]> {
  const totals: number[] = [];
  for (const week of weeks) {
    const sales = await salesByDay(week);
    totals.push(sales.reduce((sum, d) => sum + d.revenueCents, 0));
  }
  // FIXME: weeks that span a DST change are off by one hour
  return totals;
}

export function toCsv(rows: DailySales[]): string {
  const header = "day,orders,revenue";
  const body = rows.map((r) => `${r.day},${r.orders},${(r.revenueCents / 100).toFixed(2)}`);
  return [header, ...body].join("\n");
}

/** WHERE clause for the sales export; numbered placeholders, values bound by DB.query. */
export function salesFilter(opts: { since?: string; category?: string }): { where: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  if (opts.since) {
    params.push(opts.since);
    clauses.push(`created_at >= $${params.length}`);
  }
  if (opts.category) {
    params.push(opts.category);
    clauses.push(`category = $${params.length}`);
  }
  return { where: clauses.length ? `WHERE ${clauses.join(" AND ")}` : "", params };
}
