"""Hostile store conditions: a full disk, a file the app cannot use. Each gives a StoreError a user
can act on, loses nothing acknowledged, leaves no half file, and the app shows the message instead
of a traceback.

Held elsewhere (see docs/reliability.md): a second process, a newer schema, a truncated or foreign
file at the Store level (tests/store/test_store_schema.py); a full disk during export, a killed export
(tests/export/test_export_atomic.py); a store held by another process in the CLI and the app
(tests/cli/test_cli_data.py, tests/app/test_app_pages.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from app_support import open_app, release_app_store, texts
from store_helpers import blueprint, executed, proposal

from codesearch_core.export.writers import export, manifest_path
from codesearch_core.store import PROPOSAL
from codesearch_core.store.core import Store

#: Runs `sys.argv[2]` (Python, with `store` open) in a process that may not write a file past
#: `sys.argv[3]` bytes. SIGXFSZ is ignored, so such a write fails with EFBIG ("File too large"):
#: to the code, the same failure as a full disk (ENOSPC).
_LIMITED = textwrap.dedent(
    """
    import json, resource, signal, sys
    from pathlib import Path
    from codesearch_core.errors import StoreError
    from codesearch_core.export.writers import export
    from codesearch_core.store.core import Store
    from codesearch_core.store.filters import QueueFilters

    store = Store(sys.argv[1])
    limit = int(sys.argv[3])
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    try:
        exec(sys.argv[2])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
        store.close()
    """
)


def run_limited(db: Path, code: str, limit: int) -> dict[str, Any]:
    """What the code printed last (one JSON object)."""
    proc = subprocess.run(
        [sys.executable, "-c", _LIMITED, str(db), textwrap.dedent(code), str(limit)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return report


def accept_all(store: Store, first: int, last: int) -> None:
    bps = [blueprint(i) for i in range(first, last)]
    store.blueprints.add(bps)
    items = store.add_proposals([proposal(bp) for bp in bps])
    executed(store, items)
    for item in items:
        store.queue(PROPOSAL).decide(item, "accept", "ann")


@pytest.mark.slow
def test_a_full_disk_while_writing_the_manifest_changes_neither_file(tmp_path: Path) -> None:
    db, out = tmp_path / "studio.duckdb", tmp_path / "out" / "train.jsonl"
    with Store(db) as store:
        accept_all(store, 0, 5)
        export(store, "chat", out)
    before = out.read_bytes(), manifest_path(out).read_bytes()
    # An export that selects nothing is 0 bytes and fits under the limit; its manifest does not.
    report = run_limited(
        db,
        f"""
        try:
            export(store, "chat", Path({str(out)!r}), filters=QueueFilters(blueprint_id="none"))
            print(json.dumps({{"error": ""}}))
        except StoreError as err:
            print(json.dumps({{"error": str(err)}}))
        """,
        limit=100,
    )
    assert "File too large" in report["error"]
    assert sorted(p.name for p in out.parent.iterdir() if p.name.endswith(".tmp")) == []
    assert (out.read_bytes(), manifest_path(out).read_bytes()) == before


@pytest.mark.slow
def test_a_full_disk_during_decisions_keeps_every_acknowledged_one(tmp_path: Path) -> None:
    db = tmp_path / "studio.duckdb"
    with Store(db) as store:
        bps = [blueprint(i) for i in range(20)]
        store.blueprints.add(bps)
        items = store.add_proposals([proposal(bp) for bp in bps])
        executed(store, items)
    # The write-ahead log reaches the limit after a few dozen decisions.
    report = run_limited(
        db,
        f"""
        items, done, error = {items!r}, 0, ""
        while not error:
            try:
                store.queue("proposal").decide(items[done % len(items)], "accept", "ann", note="n" * 2000)
                done += 1
            except StoreError as err:
                error = str(err)
        # Space is back: the same Store keeps working.
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
        store.queue("proposal").decide(items[0], "reject", "ann")
        print(json.dumps({{"done": done, "error": error}}))
        """,
        limit=64 * 1024,
    )
    assert report["done"] > 0
    assert report["error"].startswith(f"could not record the decision in {db}: ")
    assert "File too large" in report["error"]
    assert report["error"].endswith("Nothing was written.")
    with Store(db) as store:
        assert store.counts().decision_events == report["done"] + 1
        assert store.check_caches() == []


# --- a store file the app cannot use ------------------------------------------------------------


def newer_store(tmp_path: Path) -> Path:
    path = tmp_path / "newer.duckdb"
    Store(path).close()
    conn = duckdb.connect(str(path))
    conn.execute("INSERT INTO schema_version VALUES (99, now()::TIMESTAMP)")
    conn.close()
    return path


def truncated_store(tmp_path: Path) -> Path:
    path = tmp_path / "truncated.duckdb"
    with Store(path) as store:
        store.blueprints.add([blueprint(i) for i in range(50)])
    os.truncate(path, 12 * 1024)
    return path


def foreign_file(tmp_path: Path) -> Path:
    path = tmp_path / "notes.duckdb"
    path.write_text("these are my notes, not a database\n" * 100)
    return path


@pytest.fixture
def fresh_app_caches() -> Iterator[None]:
    release_app_store()
    yield
    release_app_store()


@pytest.mark.usefixtures("fresh_app_caches")
@pytest.mark.parametrize(
    ("make", "says"),
    [
        (newer_store, "written by a newer codesearch-gym (schema 99"),
        (truncated_store, "The file is damaged or truncated"),
        (foreign_file, "is not a DuckDB database, not a codesearch store"),
    ],
    ids=["newer schema", "truncated", "not a store"],
)
def test_the_app_shows_why_a_store_cannot_be_opened_and_leaves_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: Callable[[Path], Path], says: str
) -> None:
    path = make(tmp_path)
    content = path.read_bytes()
    monkeypatch.setenv("CODESEARCH_DB", str(path))
    for page in ("pages/overview.py", "pages/review.py", "pages/export.py"):
        at = open_app(page)  # asserts that no page raised
        (error,) = texts(at, "error")
        assert error.startswith(f"The store at `{path}` cannot be opened: ")
        assert says in error
    assert path.read_bytes() == content
