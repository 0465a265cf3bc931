from __future__ import annotations

from pathlib import Path

from pipeline.ingest.sqlite_cache import ExtractCache


def test_put_then_latest(tmp_path: Path) -> None:
    cache = ExtractCache(tmp_path / "cache.db")
    cache.put("users", "2024-05-01", b"a")
    cache.put("users", "2024-05-02", b"b")
    assert cache.latest("users")["payload"] == b"b"
    cache.close()


def test_for_day_returns_every_extract(tmp_path: Path) -> None:
    cache = ExtractCache(tmp_path / "cache.db")
    cache.put("users", "2024-05-01", b"a")
    cache.put("events", "2024-05-01", b"e")
    rows = cache._conn.execute("SELECT * FROM extracts WHERE ds = ?", ("2024-05-01",)).fetchall()
    assert len(rows) == 2
    assert {r["name"] for r in cache.for_day("2024-05-01")} == {"users", "events"}
