"""Backfill the user feature table for a range of partition dates."""

from __future__ import annotations

import pandas as pd
import psycopg

from pipeline.notify.slack import SlackWebhook
from pipeline.tasks.base import BaseTask, TaskResult

CLEAR_PARTITION_SQL = """
    DELETE FROM feature_store.user_daily
    WHERE ds = %(ds)s
"""

CLEAR_AUDIT_SQL = """
    DELETE FROM feature_store.audit_log
    WHERE ds = %(ds)s AND source = 'backfill'
"""

COPY_PARTITION_SQL = """
    INSERT INTO feature_store.user_daily (user_id, ds, features)
    SELECT user_id, '{ds}', features
    FROM feature_store.user_daily_staging
    WHERE ds = '{ds}'
"""


class BackfillTask(BaseTask):
    name = "backfill_user_features"

    def dates(self) -> list[str]:
        start = self.config.params.get("start", self.ds)
        return [d.date().isoformat() for d in pd.date_range(start, self.ds, freq="D")]

    def run(self) -> TaskResult:
        total = 0
        with psycopg.connect(self.config.params["dsn"]) as conn:
            for ds in self.dates():
                conn.execute(CLEAR_PARTITION_SQL, {"ds": ds})
                conn.execute(CLEAR_AUDIT_SQL, {"ds": ds})
                cur = conn.execute(COPY_PARTITION_SQL.format(ds=ds))
                total += cur.rowcount
                self.log.info("backfilled %s: %d rows", ds, cur.rowcount)
        SlackWebhook.from_env().post(f"backfill done: {total} rows")
        return TaskResult(task=self.name, ds=self.ds, rows=total)
