"""A local sqlite cache of warehouse extracts, so notebooks and tests do not hit Postgres."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from pipeline.utils.log import get_logger

log = get_logger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS extracts (
    name TEXT NOT NULL,
    ds TEXT NOT NULL,
    payload BLOB NOT NULL,
    PRIMARY KEY (name, ds)
)
"""

LATEST_EXTRACT_SQL = """
    SELECT *
    FROM extracts
    WHERE name = ?
    ORDER BY ds DESC
    LIMIT 1
"""

ALL_FOR_DAY_SQL = """
    SELECT *
    FROM extracts
    WHERE ds = ?
"""


class ExtractCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn = sqlite3.connect(path)
        self._conn.row_factory = sqlite3.Row
        self._conn.executescript(SCHEMA)

    def put(self, name: str, ds: str, payload: bytes) -> None:
        self._conn.execute(
            "INSERT OR REPLACE INTO extracts (name, ds, payload) VALUES (?, ?, ?)",
            (name, ds, payload),
        )
        self._conn.commit()

    def latest(self, name: str) -> dict[str, Any] | None:
        row = self._conn.execute(LATEST_EXTRACT_SQL, (name,)).fetchone()
        return dict(row) if row else None

    def for_day(self, ds: str) -> list[dict[str, Any]]:
        return [dict(r) for r in self._conn.execute(ALL_FOR_DAY_SQL, (ds,))]

    def close(self) -> None:
        self._conn.close()
        log.debug("closed extract cache %s", self.path)
