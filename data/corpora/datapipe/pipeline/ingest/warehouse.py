"""Read-side client for the Postgres warehouse (psycopg 3)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.rows import dict_row

from pipeline.utils.log import format_duration, get_logger
from pipeline.utils.timing import Stopwatch

log = get_logger(__name__)

DSN = os.environ.get("WAREHOUSE_DSN", "postgresql://datapipe@warehouse.internal:5432/analytics")

USERS_SNAPSHOT_SQL = """
    SELECT *
    FROM analytics.users
    WHERE updated_at::date <= %(ds)s
"""

EVENTS_FOR_DAY_SQL = """
    SELECT *
    FROM analytics.events
    WHERE event_date = %(ds)s
      AND event_type = ANY(%(types)s)
"""

PURGE_SCRATCH_SQL = """
    DELETE FROM scratch.ingest_runs
    WHERE started_at < now() - interval '14 days'
"""


class WarehouseClient:
    """Thin wrapper over a psycopg connection with dict rows and timing."""

    def __init__(self, dsn: str = DSN, statement_timeout_ms: int = 600_000) -> None:
        self._dsn = dsn
        self._timeout = statement_timeout_ms

    @contextmanager
    def connect(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        with psycopg.connect(self._dsn, row_factory=dict_row) as conn:
            conn.execute(f"SET statement_timeout = {int(self._timeout)}")
            yield conn

    def fetch(self, sql: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        watch = Stopwatch()
        watch.start()
        with self.connect() as conn, conn.cursor() as cur:
            cur.execute(sql, params or {})
            rows = cur.fetchall()
        log.info("fetched %d rows in %s", len(rows), format_duration(watch.stop()))
        return rows

    def stream(self, sql: str, params: Mapping[str, Any] | None = None,
               batch: int = 5_000) -> Iterator[dict[str, Any]]:
        with self.connect() as conn, conn.cursor(name="datapipe_stream") as cur:
            cur.itersize = batch
            cur.execute(sql, params or {})
            yield from cur

    def users_snapshot(self, ds: str) -> list[dict[str, Any]]:
        return self.fetch(USERS_SNAPSHOT_SQL, {"ds": ds})

    def events_for_day(self, ds: str, types: list[str]) -> Iterator[dict[str, Any]]:
        return self.stream(EVENTS_FOR_DAY_SQL, {"ds": ds, "types": types})

    def purge_scratch(self) -> int:
        with self.connect() as conn:
            cur = conn.execute(PURGE_SCRATCH_SQL)
            return cur.rowcount
