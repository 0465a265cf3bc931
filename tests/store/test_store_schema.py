"""Opening a store file: creation, forward migration, and a clear error for every file it cannot use."""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import time
from pathlib import Path

import duckdb
import pytest
from store_helpers import blueprint, finding, proposal, rg_call, run_ok
from store_holder import store_held_elsewhere

from codesearch_core.errors import StoreError
from codesearch_core.grading import score
from codesearch_core.models import CounterCall, Plan, PlanStep
from codesearch_core.store import PROPOSAL, QA
from codesearch_core.store.core import Store
from codesearch_core.store.duckdb_file import least_size
from codesearch_core.store.rows import (
    BLUEPRINT_COLUMNS,
    PROPOSAL_COLUMNS,
    blueprint_row,
    proposal_id,
    proposal_row,
    utc_now,
)
from codesearch_core.store.schema import (
    SCHEMA_VERSION,
    apply_migrations,
    read_schema_version,
    user_tables,
)


def test_a_new_store_has_the_current_schema(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dir" / "studio.duckdb"
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.counts().blueprints == 0
    assert path.is_file()


def _write_v1_store(path: Path) -> None:
    """A file as the first schema version left it, with one blueprint and one proposal."""
    conn = duckdb.connect(str(path))
    apply_migrations(conn, current=0, upto=1)
    bp = blueprint(1)
    now = utc_now()
    # v1 had no counter_calls or plan column (v7 added them), nor the pins (v9), nor the split
    # (v10).
    values = dict(zip(BLUEPRINT_COLUMNS, blueprint_row(bp, source="v1", now=now), strict=True))
    del values["counter_calls"], values["plan"], values["snapshot_id"], values["tool_versions"]
    del values["split"]
    conn.execute(
        f"INSERT INTO blueprints ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
        list(values.values()),
    )
    prop = proposal(bp)
    conn.execute(
        f"INSERT INTO proposals ({', '.join(PROPOSAL_COLUMNS)}) "
        f"VALUES ({', '.join('?' * len(PROPOSAL_COLUMNS))})",
        list(proposal_row(prop, pid=proposal_id(prop), blueprint_seq=1, now=now)),
    )
    assert read_schema_version(conn) == 1
    conn.close()


def test_an_older_store_is_migrated_and_keeps_its_data(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    _write_v1_store(path)
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        bp = store.blueprints.get("bp-001")
        assert bp == blueprint(1)
        # v2 back-filled the audit trail and the sightings of what v1 stored.
        assert [r.revision for r in store.blueprints.revisions(bp.id)] == [1]
        stored = store.get_proposal(proposal_id(proposal(bp)))
        assert stored is not None and stored.sightings == 1
        assert store.blueprints.upsert(blueprint(1, intent="Find handler_1 calls")) == "updated"
        assert [r.revision for r in store.blueprints.revisions(bp.id)] == [1, 2]
    conn = duckdb.connect(str(path))
    assert read_schema_version(conn) == SCHEMA_VERSION
    conn.close()


def test_a_v2_store_keeps_every_reviewers_decision_as_theirs(tmp_path: Path) -> None:
    """v2 kept one decision per item: the last click. v3 reads the log again: both reviewers'
    decisions are votes, and an item they disagree on is a conflict, not the later one's."""
    path = tmp_path / "v2.duckdb"
    _write_v1_store(path)
    conn = duckdb.connect(str(path))
    apply_migrations(conn, current=1, upto=2)
    pid = proposal_id(proposal(blueprint(1)))
    now = utc_now()
    for event, action, undoes, who in [
        (1, "accept", None, "ann"),
        (2, "reject", None, "bob"),
        (3, "skip", None, "cid"),
        (4, "undo", 3, "cid"),
    ]:
        conn.execute(
            "INSERT INTO decisions VALUES (?, ?, ?, ?, ?, '', '', ?)",
            [event, pid, action, undoes, who, now],
        )
    conn.execute(
        "UPDATE proposals SET decision = 'reject', decision_event_id = 2, span_f1 = 0, reward = 0.1"
    )
    conn.execute(
        "INSERT INTO executions VALUES (1, ?, true, '[]', 0, 0, '', 0.1, false, NULL, '', ?)",
        [pid, now],
    )
    conn.execute("INSERT INTO grades VALUES (1, ?, 0, 0, 0, 0, 0, 1, 0, 0.1, '{}', ?)", [pid, now])
    conn.close()
    with Store(path) as store:
        item = store.review_item(pid)
        assert item is not None
        assert {who: action for who, (action, _) in item.votes.items()} == {
            "ann": "accept",
            "bob": "reject",
        }
        assert item.state == "conflict"
        assert item.grade_current  # v2 deleted grades on edits: what it kept is current
        assert store.check_caches() == []


def test_a_store_from_a_newer_build_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.duckdb"
    Store(path).close()
    conn = duckdb.connect(str(path))
    conn.execute("INSERT INTO schema_version VALUES (99, now()::TIMESTAMP)")
    conn.close()
    knows = rf"newer codesearch-gym \(schema 99, this build knows {SCHEMA_VERSION}\)"
    with pytest.raises(StoreError, match=knows):
        Store(path)


def test_a_foreign_duckdb_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE measurements (x INTEGER)")
    conn.close()
    with pytest.raises(StoreError, match=r"not a codesearch store.*measurements"):
        Store(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (os.urandom(64 * 1024), "not a DuckDB database"),
        (b"", "an empty file"),
        (None, "a SQLite database"),
    ],
)
def test_a_file_that_is_not_a_store_is_refused(
    tmp_path: Path, content: bytes | None, message: str
) -> None:
    path = tmp_path / "studio.duckdb"
    if content is None:
        lite = sqlite3.connect(path)
        lite.execute("CREATE TABLE t (x)")
        lite.commit()
        lite.close()
    else:
        path.write_bytes(content)
    with pytest.raises(StoreError, match=message):
        Store(path)
    assert path.exists(), "the file is left for the user to inspect"


@pytest.mark.parametrize("keep_bytes", [12 * 1024, 64 * 1024])
def test_a_truncated_store_is_refused(tmp_path: Path, keep_bytes: int) -> None:
    # The headers survive (the file still says DUCK); the blocks they point to are gone.
    path = tmp_path / "studio.duckdb"
    with Store(path) as store:
        store.blueprints.add([blueprint(i) for i in range(50)])
    os.truncate(path, keep_bytes)
    with pytest.raises(StoreError, match="damaged or truncated"):
        Store(path)


@pytest.mark.parametrize("keep_percent", [1, 10, 25, 40, 60, 75, 90, 99])
def test_any_cut_of_a_store_is_refused_at_open_with_the_sizes(
    tmp_path: Path, keep_percent: int
) -> None:
    # A copy cut short (a full disk, an interrupted transfer) must be refused when the store is
    # opened, not later with a raw IO error mid-work: DuckDB itself opens most such files.
    path = tmp_path / "studio.duckdb"
    with Store(path) as store:
        store.blueprints.add([blueprint(i) for i in range(400)])
    size = path.stat().st_size
    os.truncate(path, size * keep_percent // 100)
    with pytest.raises(StoreError, match=r"damaged or truncated") as err:
        Store(path)
    assert str(path) in str(err.value)
    assert "restore it from a backup" in str(err.value)


def test_a_whole_store_opens_after_the_size_check(tmp_path: Path) -> None:
    path = tmp_path / "studio.duckdb"
    with Store(path) as store:
        store.blueprints.add([blueprint(i) for i in range(400)])
    with path.open("rb") as fh:
        assert least_size(fh) == path.stat().st_size
    with Store(path) as store:
        assert store.counts().blueprints == 400


def test_a_directory_is_not_a_store(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        Store(tmp_path)


def test_a_second_process_gets_a_clear_error_not_a_hang(tmp_path: Path) -> None:
    path = tmp_path / "studio.duckdb"
    with store_held_elsewhere(path, idle_release_s=None) as holder:  # as a long verify run
        started = time.monotonic()
        with pytest.raises(StoreError, match=f"in use by process {holder.pid} \\(waited 0.5 s\\)"):
            Store(path, lock_wait_s=0.5)
        assert time.monotonic() - started < 30  # waited, then said so; no hang
    with Store(path) as store:  # free again once the other process is gone
        assert store.counts().blueprints == 0


def test_an_idle_store_lets_another_process_in_and_then_sees_its_writes(tmp_path: Path) -> None:
    """Bug 11 of the review issue: the studio held the file, so no CLI command could run beside it."""
    path = tmp_path / "studio.duckdb"
    with store_held_elsewhere(path, idle_release_s=0.3) as studio:
        told: list[str] = []
        with Store(path, lock_wait_s=30, on_wait=told.append) as store:
            store.blueprints.add([blueprint(i) for i in range(3)])
        assert studio.blueprints() == 3  # the studio opens the file again and sees the write
    assert all(f"in use by process {studio.pid}" in m for m in told)


def test_an_idle_store_lets_go_of_the_file_and_opens_it_again(tmp_path: Path) -> None:
    path = tmp_path / "studio.duckdb"
    with Store(path, idle_release_s=0.05) as store:
        deadline = time.monotonic() + 30
        while store._handle._conn is not None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert store._handle._conn is None  # let go of while idle
        assert store.counts().blueprints == 0  # and opened again by the next call
    with Store(path, idle_release_s=None) as held:
        time.sleep(0.2)
        assert held._handle._conn is not None  # a store told to hold the file keeps it


def test_the_review_cards_lookups_by_item_have_indexes(tmp_path: Path) -> None:
    """v4: the card's votes and sightings lookups by item scanned their tables (14 ms a card at
    100,000 items); DuckDB uses a primary key's index only for the whole key."""
    path = tmp_path / "studio.duckdb"
    Store(path).close()
    conn = duckdb.connect(str(path))
    try:
        indexes = conn.execute("SELECT index_name, sql FROM duckdb_indexes()").fetchall()
    finally:
        conn.close()
    assert ("votes_item", "CREATE INDEX votes_item ON votes(item_id);") in indexes
    assert any(name == "sightings_proposal" for name, _ in indexes)


def test_a_v4_store_gains_people_and_an_audit_trail_that_starts_empty(tmp_path: Path) -> None:
    """v5: `users` and `audit`. What an older build stored has no audit rows (it was not audited);
    the first change after the migration is."""
    path = tmp_path / "old.duckdb"
    _write_v1_store(path)
    conn = duckdb.connect(str(path))
    apply_migrations(conn, current=1, upto=4)
    assert "audit" not in user_tables(conn)
    conn.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.users() == [] and store.audit_log() == []
        store.blueprints.upsert(blueprint(1, intent="Find handler_1 calls"))
        (entry,) = store.audit_log()
        assert (entry.action, entry.target, entry.mode) == ("blueprint.update", "bp-001", "cli")


def test_a_v6_store_is_graded_again_by_coverage_when_it_opens(tmp_path: Path) -> None:
    # A store as v6 left it: the first line of a two-line expected span found, graded by the
    # overlap rule (a full hit, F1 1.0) against v6's grading key.
    path = tmp_path / "v6.duckdb"
    bp = blueprint(1)  # expects src/app.py:2-3
    with Store(path) as store:
        store.blueprints.add([bp])
        (pid,) = store.add_proposals([proposal(bp)])
        run = run_ok(finding(line=2))
        store.record_execution_and_grade(pid, run, *score(run, None, bp.expected))
    conn = duckdb.connect(str(path))
    old_key = ("sha256(b.corpus || chr(10) || CAST(list_sort(CAST(json_extract(b.expected, "
               "'$[*]') AS VARCHAR[])) AS VARCHAR))")  # fmt: skip
    conn.execute(
        f"UPDATE grades SET span_f1 = 1.0, reward = 1.0, graded_against = (SELECT {old_key} "
        "FROM blueprints b)"
    )
    conn.execute("UPDATE proposals SET span_f1 = 1.0, reward = 1.0")
    # Back to v6: undo v16 (step labels; its episode columns go with the table), v15 (the QA queue), v14 (guidelines), v13 (the kind of item), v12 (episodes), v10 (split, eval
    # runs), v9 (pins, drift), v8 (drafts) and v7 (counter-calls, plans).
    for statement in (
        "DROP TABLE step_labels",  # v16
        "DROP SEQUENCE step_label_seq",
        "DROP TABLE qa_items",  # v15
        "DROP SEQUENCE qa_seq",
        "DROP TABLE guidelines",  # v14 (its columns on `decisions` stay; v14 adds them if missing)
        "DROP INDEX decisions_reviewer",
        # DuckDB drops no column of a table that has an index.
        "DROP INDEX decisions_item",
        "ALTER TABLE decisions DROP COLUMN kind",
        "CREATE INDEX decisions_item ON decisions (item_id)",
        "DROP TABLE votes",
        "CREATE TABLE votes (item_id VARCHAR NOT NULL, reviewer VARCHAR NOT NULL, action VARCHAR "
        "NOT NULL, event_id BIGINT NOT NULL, PRIMARY KEY (item_id, reviewer))",
        "CREATE INDEX votes_item ON votes(item_id)",
        "DROP TABLE leases",
        "CREATE TABLE leases (item_id VARCHAR NOT NULL, reviewer VARCHAR NOT NULL, "
        "expires_at TIMESTAMP NOT NULL, PRIMARY KEY (item_id, reviewer))",
        "DROP TABLE episodes",  # v12
        "DROP SEQUENCE episode_seq",
        "DROP TABLE eval_items",
        "DROP TABLE eval_runs",
        "ALTER TABLE blueprints DROP COLUMN split",
        "DROP TABLE drift",
        "ALTER TABLE executions DROP COLUMN snapshot_id",
        "ALTER TABLE executions DROP COLUMN tool_versions",
        "ALTER TABLE blueprints DROP COLUMN snapshot_id",
        "ALTER TABLE blueprints DROP COLUMN tool_versions",
        "DROP TABLE drafts",
        "DROP SEQUENCE draft_seq",
        "ALTER TABLE blueprints DROP COLUMN counter_calls",
        "ALTER TABLE blueprints DROP COLUMN plan",
        "DELETE FROM schema_version WHERE version >= 7",
    ):
        conn.execute(statement)
    conn.close()

    with Store(path) as store:
        assert (store.found_version, store.schema_version) == (6, SCHEMA_VERSION)
        item = store.review_item(pid)
        assert item is not None and item.grade is not None and item.grade_current
        # Half the span's lines: F1 0.5 now, from the stored run (no new run was needed).
        assert item.grade.span_f1 == pytest.approx(0.5)
        assert store.regrade_stale() == 0  # nothing stale is left
    with Store(path) as store:
        assert store.found_version == SCHEMA_VERSION  # opened again: no second regrade


def test_counter_calls_are_stored_with_the_blueprint(tmp_path: Path) -> None:
    counter = CounterCall(rg_call("handler_1"), "a text search also finds the comments")
    bp = dataclasses.replace(blueprint(1), counter_calls=(counter,))
    with Store(tmp_path / "s.duckdb") as store:
        store.blueprints.add([bp])
        assert store.blueprints.get(bp.id) == bp


def test_a_plan_blueprint_is_stored_with_its_plan(tmp_path: Path) -> None:
    first = rg_call("import handler")
    plan = Plan((PlanStep(first), PlanStep(blueprint(1).reference_call, True)))
    bp = dataclasses.replace(blueprint(1), plan=plan)
    with Store(tmp_path / "s.duckdb") as store:
        store.blueprints.add([bp])
        stored = store.blueprints.get(bp.id)
        assert stored == bp and stored is not None and stored.plan == plan


def test_a_v12_store_gains_guidelines_and_keeps_its_decisions(tmp_path: Path) -> None:
    """v14: the guidelines table and, on each decision, the guideline version and the bulk batch;
    decisions made before have neither."""
    path = tmp_path / "v12.duckdb"
    _write_v1_store(path)
    conn = duckdb.connect(str(path))
    apply_migrations(conn, current=1, upto=12)
    pid = proposal_id(proposal(blueprint(1)))
    conn.execute(
        "INSERT INTO decisions (item_id, action, undoes, reviewer, note, reason, ts, final) "
        "VALUES (?, 'skip', NULL, 'ann', '', '', ?, false)",
        [pid, utc_now()],
    )
    conn.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION and store.guidelines.get() is None
        (event,) = store.queue(PROPOSAL).history(pid)
        assert (event.guideline_version, event.batch_id) == (None, None)


def test_a_v14_store_gains_the_qa_queue_and_keeps_its_decisions(tmp_path: Path) -> None:
    """v15: the QA queue's table, empty; the decisions made before stay the proposals'."""
    path = tmp_path / "v14.duckdb"
    _write_v1_store(path)
    conn = duckdb.connect(str(path))
    apply_migrations(conn, current=1, upto=14)
    assert "qa_items" not in user_tables(conn)
    pid = proposal_id(proposal(blueprint(1)))
    conn.execute(
        "INSERT INTO decisions (item_id, action, undoes, reviewer, note, reason, ts, final) "
        "VALUES (?, 'skip', NULL, 'ann', '', '', ?, false)",
        [pid, utc_now()],
    )
    conn.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION == 16
        assert store.queue(QA).counts() == {"open": 0, "accept": 0, "reject": 0, "conflict": 0}
        (event,) = store.queue(PROPOSAL).history(pid)
        assert event.reviewer == "ann" and store.queue(PROPOSAL).last_undoable("ann") is not None
        assert store.queue("qa").last_undoable("ann") is None
