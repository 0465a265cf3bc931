"""Refresh the local sqlite extract cache used by notebooks."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pipeline.ingest.warehouse import WarehouseClient
from pipeline.tasks.base import BaseTask, TaskResult

DROP_STALE_SQL = """
    DELETE FROM extracts
    WHERE ds < date('now', '-30 days')
"""

DROP_DAY_SQL = """
    DELETE FROM extracts
    WHERE ds = ?
"""


class CacheRefreshTask(BaseTask):
    name = "cache_refresh"

    def run(self) -> TaskResult:
        path = Path(self.config.params.get("cache_path", "cache/extracts.db"))
        conn = sqlite3.connect(path)
        conn.execute(DROP_STALE_SQL)
        conn.execute(DROP_DAY_SQL, (self.ds,))
        rows = WarehouseClient().users_snapshot(self.ds)
        print("refreshing", len(rows), "rows into", path)
        conn.executemany(
            "INSERT INTO extracts (name, ds, payload) VALUES ('users', ?, ?)",
            [(self.ds, repr(r).encode()) for r in rows],
        )
        conn.commit()
        conn.close()
        return TaskResult(task=self.name, ds=self.ds, rows=len(rows))
