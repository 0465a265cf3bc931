"""Export the daily KPI tables to CSV for the finance share."""

from __future__ import annotations

import csv
from pathlib import Path

import psycopg

from pipeline.utils.log import get_logger

log = get_logger(__name__)

KPI_SQL = """
    SELECT *
    FROM reports.kpi_daily
    WHERE ds = %(ds)s
    ORDER BY metric
"""

# Legacy: the finance export still builds its query by string formatting.
FINANCE_SQL_TEMPLATE = """
    SELECT account_id, plan, mrr_cents
    FROM finance.mrr_snapshot
    WHERE snapshot_date = '{ds}'
      AND region = '{region}'
"""


def export_kpis(dsn: str, ds: str, out_dir: Path) -> Path:
    out = out_dir / f"kpi-{ds}.csv"
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        cur.execute(KPI_SQL, {"ds": ds})
        columns = [c.name for c in cur.description]
        with out.open("w", newline="", encoding="utf-8") as fh:
            # csv.writer, not print(..., file=fh): the finance import needs proper quoting.
            writer = csv.writer(fh)
            writer.writerow(columns)
            writer.writerows(cur)
    log.info("wrote %s", out)
    return out


def export_finance(dsn: str, ds: str, region: str, out_dir: Path) -> Path:
    out = out_dir / f"mrr-{region}-{ds}.csv"
    sql = FINANCE_SQL_TEMPLATE.format(ds=ds, region=region)
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        cur.execute(sql)
        with out.open("w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerows(cur)
    return out
