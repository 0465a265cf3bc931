"""The store's writes. Each function runs inside the transaction `Store._write` opened for it, so
whatever it raises leaves nothing behind, and it may be run again whole after a write conflict.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

import duckdb
import msgspec
import pandas as pd

from codesearch_core import store_queries
from codesearch_core.blueprints import blueprint_to_dict
from codesearch_core.errors import StoreError
from codesearch_core.models import (
    Blueprint,
    DecisionAction,
    Grade,
    Proposal,
    Reward,
    RunResult,
    canonical_json,
)
from codesearch_core.store_rows import (
    BLUEPRINT_COLUMNS,
    PROPOSAL_COLUMNS,
    blueprint_from_row,
    blueprint_row,
    first_row,
    proposal_id,
    proposal_row,
    utc_now,
)
from codesearch_core.store_types import BlueprintConflictError, ImportReport

#: Columns that may hold NULL: pandas would make floats of them (and lose large integers).
_NULLABLE: Final = {
    "prompt_tokens": "Int64",
    "completion_tokens": "Int64",
    "blueprint_seq": "Int64",
    "return_code": "Int64",
    "n_predicted": "Int64",
    "n_expected": "Int64",
    "n_matched": "Int64",
    "file_iou": "Float64",
    "span_precision": "Float64",
    "span_recall": "Float64",
    "span_f1": "Float64",
}

_FINDINGS_JSON: Final = msgspec.json.Encoder()


def _frame(columns: Sequence[str], rows: Sequence[list[Any] | tuple[Any, ...]]) -> pd.DataFrame:
    """A DataFrame DuckDB can scan: bulk inserts from one are ~300x faster than executemany."""
    frame = pd.DataFrame.from_records(list(rows), columns=list(columns))
    for name, dtype in _NULLABLE.items():
        if name in frame:
            frame[name] = pd.array(frame[name].tolist(), dtype=dtype)
    return frame


def add_blueprints(
    cur: duckdb.DuckDBPyConnection,
    blueprints: Sequence[Blueprint],
    *,
    source: str,
    skip_bad: bool,
) -> ImportReport:
    ids = [bp.id for bp in blueprints]
    hashes = [bp.content_hash for bp in blueprints]
    by_id: dict[str, str] = {}
    by_hash: dict[str, str] = {}
    if blueprints:
        cur.register("incoming_keys", pd.DataFrame({"id": ids, "content_hash": hashes}))
        by_id = dict(
            cur.execute(
                "SELECT b.id, b.content_hash FROM blueprints b JOIN incoming_keys i ON i.id = b.id"
            ).fetchall()
        )
        by_hash = dict(
            cur.execute(
                "SELECT b.content_hash, b.id FROM blueprints b "
                "JOIN incoming_keys i ON i.content_hash = b.content_hash"
            ).fetchall()
        )
        cur.unregister("incoming_keys")
    new: list[Blueprint] = []
    out_ids: list[str] = []
    errors: list[BlueprintConflictError] = []
    existing = 0
    for bp, content_hash in zip(blueprints, hashes, strict=True):
        stored_hash = by_id.get(bp.id)
        if stored_hash is not None and stored_hash != content_hash:
            err = BlueprintConflictError(bp.id, source=source)
            if not skip_bad:
                raise err
            errors.append(err)
            continue
        if stored_hash is not None:
            existing += 1
            out_ids.append(bp.id)
        elif content_hash in by_hash:
            existing += 1
            out_ids.append(by_hash[content_hash])
        else:
            new.append(bp)
            by_id[bp.id] = content_hash
            by_hash[content_hash] = bp.id
            out_ids.append(bp.id)
    if new:
        now = utc_now()
        _insert_blueprints(cur, new, source=source, now=now)
        _insert_revisions(cur, [(bp, 1) for bp in new], source=source, now=now)
    return ImportReport(
        source=source, new=len(new), existing=existing, errors=tuple(errors), ids=tuple(out_ids)
    )


def _insert_blueprints(
    cur: duckdb.DuckDBPyConnection, blueprints: Sequence[Blueprint], *, source: str, now: datetime
) -> None:
    rows = []
    for bp in blueprints:
        row = list(blueprint_row(bp, source=source, now=now))
        row[BLUEPRINT_COLUMNS.index("tags")] = json.dumps(list(bp.tags))
        rows.append(row)
    cur.register("incoming_blueprints", _frame(BLUEPRINT_COLUMNS, rows))
    columns = ", ".join(BLUEPRINT_COLUMNS)
    select = ", ".join(
        "CAST(CAST(tags AS JSON) AS VARCHAR[])" if c == "tags" else c for c in BLUEPRINT_COLUMNS
    )
    cur.execute(f"INSERT INTO blueprints ({columns}) SELECT {select} FROM incoming_blueprints")
    cur.unregister("incoming_blueprints")


def _insert_revisions(
    cur: duckdb.DuckDBPyConnection,
    revisions: Sequence[tuple[Blueprint, int]],
    *,
    source: str,
    now: datetime,
) -> None:
    rows = [
        (bp.id, number, bp.content_hash, canonical_json(blueprint_to_dict(bp)), source, now)
        for bp, number in revisions
    ]
    cur.register(
        "incoming_revisions",
        _frame(("blueprint_id", "revision", "content_hash", "data", "source", "changed_at"), rows),
    )
    cur.execute("INSERT INTO blueprint_revisions SELECT * FROM incoming_revisions")
    cur.unregister("incoming_revisions")


def upsert_blueprint(cur: duckdb.DuckDBPyConnection, bp: Blueprint, *, source: str) -> str:
    twin = first_row(
        cur.execute(
            "SELECT id FROM blueprints WHERE content_hash = ? AND id <> ?", [bp.content_hash, bp.id]
        )
    )
    if twin is not None:
        raise StoreError(
            f"blueprint {twin[0]!r} already has this intent, corpus and reference call; "
            "change one of them, or edit that blueprint instead"
        )
    row = first_row(
        cur.execute(
            "SELECT b.id, b.intent, b.reference_call, b.corpus, b.expected, b.language, b.tags, "
            "b.difficulty, b.notes FROM blueprints b WHERE b.id = ?",
            [bp.id],
        )
    )
    now = utc_now()
    if row is None:
        _insert_blueprints(cur, [bp], source=source, now=now)
        _insert_revisions(cur, [(bp, 1)], source=source, now=now)
        return "created"
    if blueprint_from_row(row) == bp:
        return "unchanged"
    values = blueprint_row(bp, source=source, now=now)
    updated = {
        c: v
        for c, v in zip(BLUEPRINT_COLUMNS, values, strict=True)
        if c not in ("id", "created_at")
    }
    assignments = ", ".join(f"{c} = ?" for c in updated)
    cur.execute(f"UPDATE blueprints SET {assignments} WHERE id = ?", [*updated.values(), bp.id])
    last = first_row(
        cur.execute(
            "SELECT coalesce(max(revision), 0) FROM blueprint_revisions WHERE blueprint_id = ?",
            [bp.id],
        )
    )
    _insert_revisions(cur, [(bp, int(last[0] if last else 0) + 1)], source=source, now=now)
    return "updated"


def add_proposals(
    cur: duckdb.DuckDBPyConnection, proposals: Sequence[Proposal], *, source: str
) -> ImportReport:
    if not proposals:
        return ImportReport(source=source, new=0, existing=0)
    blueprint_ids = sorted({p.blueprint_id for p in proposals})
    cur.register("incoming_keys", pd.DataFrame({"id": blueprint_ids}))
    seq_of = dict(
        cur.execute(
            "SELECT b.id, b.seq FROM blueprints b JOIN incoming_keys i ON i.id = b.id"
        ).fetchall()
    )
    cur.unregister("incoming_keys")
    unknown = [b for b in blueprint_ids if b not in seq_of]
    if unknown:
        shown = ", ".join(repr(b) for b in unknown[:5])
        raise StoreError(
            f"proposals name {len(unknown)} unknown blueprint(s): {shown}; store the blueprints first"
        )
    ids = [proposal_id(p) for p in proposals]
    cur.register("incoming_keys", pd.DataFrame({"id": sorted(set(ids))}))
    stored = {
        r[0]
        for r in cur.execute(
            "SELECT p.id FROM proposals p JOIN incoming_keys i ON i.id = p.id"
        ).fetchall()
    }
    cur.unregister("incoming_keys")
    now = utc_now()
    rows = []
    seen = set(stored)
    for p, pid in zip(proposals, ids, strict=True):
        if pid not in seen:
            seen.add(pid)
            row = list(proposal_row(p, pid=pid, blueprint_seq=seq_of[p.blueprint_id], now=now))
            row[PROPOSAL_COLUMNS.index("repairs")] = json.dumps(list(p.repairs))
            rows.append(row)
    if rows:
        cur.register("incoming_proposals", _frame(PROPOSAL_COLUMNS, rows))
        columns = ", ".join(PROPOSAL_COLUMNS)
        select = ", ".join(
            "CAST(CAST(repairs AS JSON) AS VARCHAR[])" if c == "repairs" else c
            for c in PROPOSAL_COLUMNS
        )
        cur.execute(f"INSERT INTO proposals ({columns}) SELECT {select} FROM incoming_proposals")
        cur.unregister("incoming_proposals")
    sightings = pd.DataFrame(
        {
            "proposal_id": ids,
            "engine": [p.engine for p in proposals],
            "model": [p.model for p in proposals],
        }
    )
    cur.register("incoming_sightings", sightings)
    cur.execute(
        "INSERT INTO proposal_sightings SELECT proposal_id, engine, model, ? FROM incoming_sightings",
        [now],
    )
    cur.unregister("incoming_sightings")
    return ImportReport(
        source=source, new=len(rows), existing=len(proposals) - len(rows), ids=tuple(ids)
    )


#: One outcome of verification: (proposal id, run, grade or None when nothing could be graded, reward).
ExecutionRecord = tuple[str, RunResult, Grade | None, Reward]

_EXECUTION_COLUMNS: Final = (
    "proposal_seq",
    "proposal_id",
    "ok",
    "findings",
    "n_findings",
    "return_code",
    "stderr",
    "elapsed_s",
    "truncated",
    "error_kind",
    "error",
    "executed_at",
)
_GRADE_COLUMNS: Final = (
    "proposal_seq",
    "proposal_id",
    "file_iou",
    "span_precision",
    "span_recall",
    "span_f1",
    "n_predicted",
    "n_expected",
    "n_matched",
    "reward",
    "components",
    "graded_at",
)
_GRADE_METRICS: Final = (
    "file_iou",
    "span_precision",
    "span_recall",
    "span_f1",
    "n_predicted",
    "n_expected",
    "n_matched",
)


def record_executions(cur: duckdb.DuckDBPyConnection, batch: Sequence[ExecutionRecord]) -> None:
    """Store runs, grades and rewards, replacing earlier ones, and the cached `span_f1`/`reward`.

    Three bulk statements whatever the batch size: a transaction costs tens of milliseconds to
    commit, and one statement per outcome as much again (see benchmarks/results/verify.md). A
    proposal named twice keeps its last record.
    """
    latest = {record[0]: record for record in batch}
    if not latest:
        return
    cur.register("incoming_keys", pd.DataFrame({"id": list(latest)}))
    seq_of: dict[str, int] = dict(
        cur.execute(
            "SELECT p.id, p.seq FROM proposals p JOIN incoming_keys i ON i.id = p.id"
        ).fetchall()
    )
    cur.unregister("incoming_keys")
    unknown = [pid for pid in latest if pid not in seq_of]
    if unknown:
        more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
        raise StoreError(f"no proposal with id {unknown[0]!r} in the store{more}")
    now = utc_now()
    executions: list[tuple[Any, ...]] = []
    grades: list[tuple[Any, ...]] = []
    for pid, run, grade, reward in latest.values():
        seq = seq_of[pid]
        executions.append(
            (
                seq,
                pid,
                run.ok,
                # msgspec writes the same objects as `Finding.to_dict` + json.dumps, ~10x faster.
                _FINDINGS_JSON.encode(run.findings).decode("utf-8"),
                len(run.findings),
                run.return_code,
                run.stderr,
                run.elapsed_s,
                run.truncated,
                None if run.error_kind is None else run.error_kind.value,
                run.error,
                now,
            )
        )
        metrics: tuple[Any, ...] = (
            (None,) * len(_GRADE_METRICS)
            if grade is None
            else tuple(getattr(grade, name) for name in _GRADE_METRICS)
        )
        grades.append((seq, pid, *metrics, reward.total, json.dumps(dict(reward.components)), now))
    cur.register("incoming_executions", _frame(_EXECUTION_COLUMNS, executions))
    cur.register("incoming_grades", _frame(_GRADE_COLUMNS, grades))
    cur.execute(
        "INSERT OR REPLACE INTO executions "
        "SELECT * REPLACE (CAST(findings AS JSON) AS findings) FROM incoming_executions"
    )
    cur.execute(
        "INSERT OR REPLACE INTO grades "
        "SELECT * REPLACE (CAST(components AS JSON) AS components) FROM incoming_grades"
    )
    cur.execute(
        "UPDATE proposals SET span_f1 = g.span_f1, reward = g.reward FROM incoming_grades g "
        "WHERE proposals.seq = g.proposal_seq"
    )
    cur.unregister("incoming_executions")
    cur.unregister("incoming_grades")


def record_decision(
    cur: duckdb.DuckDBPyConnection,
    item_id: str,
    action: DecisionAction,
    reviewer: str,
    note: str,
    reason: str,
    ts: datetime,
) -> int:
    # One round trip for the item and its events: this runs once per keystroke of every reviewer.
    found = first_row(
        cur.execute(
            "SELECT p.valid, (SELECT list({'e': event_id, 'a': action, 'u': undoes} "
            "ORDER BY event_id) FROM decisions WHERE item_id = ?) FROM proposals p WHERE p.id = ?",
            [item_id, item_id],
        )
    )
    if found is None:
        raise StoreError(f"no proposal with id {item_id!r} in the store")
    if action is DecisionAction.ACCEPT and not found[0]:
        raise StoreError(
            f"proposal {item_id!r} has no valid tool call, so it cannot be accepted: reject it, "
            "or edit the call and accept the new proposal"
        )
    events = [(e["e"], e["a"], e["u"]) for e in found[1] or []]
    active = store_queries.active_events(events)
    undoes: int | None = None
    if action is DecisionAction.UNDO:
        if not active:
            raise StoreError(f"nothing to undo on item {item_id!r}: it has no decision left")
        undoes = active.pop()[0]
    row = first_row(
        cur.execute(
            "INSERT INTO decisions (item_id, action, undoes, reviewer, note, reason, ts) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING event_id",
            [item_id, action.value, undoes, reviewer, note, reason, ts],
        )
    )
    assert row is not None
    event_id = int(row[0])
    if action is not DecisionAction.UNDO:
        active.append((event_id, action.value))
    state_event, state = active[-1] if active else (None, None)
    # This write also makes two concurrent decisions on one item conflict, so one of them retries.
    cur.execute(
        "UPDATE proposals SET decision = ?, decision_event_id = ? WHERE id = ?",
        [state, state_event, item_id],
    )
    return event_id
