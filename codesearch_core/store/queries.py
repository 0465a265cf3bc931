"""Read queries over the store. Each function takes a cursor; `Store` supplies it.

Speed (see benchmarks/bench_store.py): the queue filters on `proposals` columns, reaches blueprints
and grades through semi-joins on integer keys, and joins the details for one page only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

import duckdb

from codesearch_core.errors import StoreError
from codesearch_core.models import Blueprint, DecisionAction, Grade, Reward
from codesearch_core.store.rows import (
    BLUEPRINT_SELECT,
    DECISION_SELECT,
    EXECUTION_SELECT,
    PROPOSAL_SELECT,
    blueprint_from_row,
    decision_from_row,
    execution_from_row,
    first_row,
    stored_proposal_from_row,
)
from codesearch_core.store.types import (
    BlueprintFilters,
    BlueprintPage,
    BlueprintRevision,
    DecisionEvent,
    DecisionState,
    PendingExecution,
    QueueFilters,
    QueueItem,
    QueuePage,
    ReviewItem,
    StoredProposal,
)

Cursor = duckdb.DuckDBPyConnection

_DECISION_SQL: Final[dict[DecisionState, str | None]] = {
    DecisionState.UNDECIDED: "p.decision IS NULL",
    DecisionState.ACCEPTED: "p.decision = 'accept'",
    DecisionState.REJECTED: "p.decision = 'reject'",
    DecisionState.SKIPPED: "p.decision = 'skip'",
    DecisionState.DECIDED: "p.decision IS NOT NULL",
    DecisionState.ANY: None,
}

#: `proposed_tool` value that selects proposals without a valid call (the confusion chart's label).
INVALID_TOOL: Final = "invalid"


# --- filters ---------------------------------------------------------------------------------------


def blueprint_clauses(f: QueueFilters | BlueprintFilters) -> tuple[list[str], list[Any]]:
    """WHERE clauses over `blueprints b` for the blueprint-level filters."""
    clauses: list[str] = []
    params: list[Any] = []
    if f.tool:
        clauses.append("b.tool = ?")
        params.append(f.tool)
    if f.language:
        clauses.append("b.language = ?")
        params.append(f.language)
    if f.tag:
        clauses.append("list_contains(b.tags, ?)")
        params.append(f.tag)
    if f.text:
        clauses.append("b.intent ILIKE ? ESCAPE '\\'")
        params.append(like_pattern(f.text))
    return clauses, params


def like_pattern(text: str) -> str:
    """A LIKE pattern matching `text` anywhere. ILIKE is ~25% cheaper than lower() + contains()."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def proposal_clauses(f: QueueFilters, *, decision: bool = True) -> tuple[list[str], list[Any]]:
    """WHERE clauses over `proposals p` (its cached grade stands in for `grades`)."""
    clauses: list[str] = []
    params: list[Any] = []
    for column, value in (
        ("blueprint_id", f.blueprint_id),
        ("engine", f.engine),
        ("model", f.model),
        ("mutation_kind", f.mutation_kind),
    ):
        if value:
            clauses.append(f"p.{column} = ?")
            params.append(value)
    if f.proposed_tool == INVALID_TOOL:
        clauses.append("p.tool IS NULL")
    elif f.proposed_tool:
        clauses.append("p.tool = ?")
        params.append(f.proposed_tool)
    if f.valid_only:
        clauses.append("p.valid")
    if f.min_f1 is not None:
        clauses.append("p.span_f1 >= ?")
        params.append(f.min_f1)
    if f.max_f1 is not None:
        clauses.append("p.span_f1 <= ?")
        params.append(f.max_f1)
    state = _DECISION_SQL[DecisionState(f.decision)] if decision else None
    if state:
        clauses.append(state)
    return clauses, params


def queue_where(f: QueueFilters) -> tuple[str, list[Any]]:
    """The WHERE condition for proposals `p` matching `f` (blueprint filters as a semi-join)."""
    clauses, params = proposal_clauses(f)
    bp_clauses, bp_params = blueprint_clauses(f)
    if bp_clauses:
        clauses.append(
            f"p.blueprint_seq IN (SELECT b.seq FROM blueprints b WHERE {' AND '.join(bp_clauses)})"
        )
        params += bp_params
    return (" AND ".join(clauses) or "TRUE"), params


# --- blueprints ------------------------------------------------------------------------------------


def get_blueprint(cur: Cursor, blueprint_id: str) -> Blueprint | None:
    row = first_row(
        cur.execute(f"SELECT {BLUEPRINT_SELECT} FROM blueprints b WHERE b.id = ?", [blueprint_id])
    )
    return None if row is None else blueprint_from_row(row)


def get_blueprints(cur: Cursor, blueprint_ids: Sequence[str]) -> list[Blueprint]:
    rows = cur.execute(
        f"SELECT {BLUEPRINT_SELECT} FROM blueprints b WHERE b.id IN (SELECT unnest(?::VARCHAR[]))",
        [list(blueprint_ids)],
    ).fetchall()
    found = {row[0]: blueprint_from_row(row) for row in rows}
    return [found[i] for i in blueprint_ids if i in found]


def list_blueprints(cur: Cursor, f: BlueprintFilters, *, offset: int, limit: int) -> BlueprintPage:
    clauses, params = blueprint_clauses(f)
    if f.text:
        # Blueprint search also matches the id.
        clauses[-1] = "(b.intent ILIKE ? ESCAPE '\\' OR b.id ILIKE ? ESCAPE '\\')"
        params.append(like_pattern(f.text))
    for column, value in (("corpus", f.corpus), ("difficulty", f.difficulty)):
        if value:
            clauses.append(f"b.{column} = ?")
            params.append(value)
    where = " AND ".join(clauses) or "TRUE"
    rows = cur.execute(
        f"SELECT count(*) OVER (), {BLUEPRINT_SELECT} FROM blueprints b WHERE {where} "
        "ORDER BY b.id LIMIT ? OFFSET ?",
        [*params, max(limit, 0), max(offset, 0)],
    ).fetchall()
    if rows:
        total = int(rows[0][0])
    else:
        one = first_row(cur.execute(f"SELECT count(*) FROM blueprints b WHERE {where}", params))
        total = int(one[0]) if one else 0
    return BlueprintPage(tuple(blueprint_from_row(r[1:]) for r in rows), total, offset)


def blueprint_revisions(cur: Cursor, blueprint_id: str) -> tuple[BlueprintRevision, ...]:
    rows = cur.execute(
        "SELECT blueprint_id, revision, content_hash, data, source, changed_at "
        "FROM blueprint_revisions WHERE blueprint_id = ? ORDER BY revision",
        [blueprint_id],
    ).fetchall()
    return tuple(
        BlueprintRevision(r[0], int(r[1]), r[2], json.loads(r[3]), r[4], r[5]) for r in rows
    )


# --- proposals -------------------------------------------------------------------------------------


def get_proposal(cur: Cursor, proposal_id: str) -> StoredProposal | None:
    found = first_row(
        cur.execute(f"SELECT {PROPOSAL_SELECT} FROM proposals p WHERE p.id = ?", [proposal_id])
    )
    if found is None:
        return None
    sightings = first_row(
        cur.execute("SELECT count(*) FROM proposal_sightings WHERE proposal_id = ?", [proposal_id])
    )
    return stored_proposal_from_row(found, sightings=int(sightings[0]) if sightings else 1)


def proposals_for_blueprint(cur: Cursor, blueprint_id: str) -> tuple[StoredProposal, ...]:
    rows = cur.execute(
        f"SELECT {PROPOSAL_SELECT} FROM proposals p WHERE p.blueprint_id = ? ORDER BY p.seq",
        [blueprint_id],
    ).fetchall()
    return tuple(stored_proposal_from_row(r) for r in rows)


def pending_verification(
    cur: Cursor, limit: int, *, include_invalid: bool
) -> list[PendingExecution]:
    valid = "" if include_invalid else "AND p.valid"
    rows = cur.execute(
        f"SELECT p.id, p.call, p.error, {BLUEPRINT_SELECT} FROM proposals p "
        "JOIN blueprints b ON b.seq = p.blueprint_seq "
        f"WHERE p.seq NOT IN (SELECT proposal_seq FROM executions) {valid} "
        "ORDER BY p.seq LIMIT ?",
        [max(limit, 0)],
    ).fetchall()
    return [
        PendingExecution(
            proposal_id=r[0],
            call_json=r[1],
            blueprint=blueprint_from_row(r[3:]),
            invalid_reason="" if r[1] is not None else (r[2] or "no valid tool call"),
        )
        for r in rows
    ]


# --- decisions -------------------------------------------------------------------------------------


def active_events(events: Sequence[Sequence[Any]]) -> list[tuple[int, str]]:
    """(event_id, action) of the accept/reject/skip events no undo cancelled, oldest first.

    `events` are (event_id, action, undoes) rows of one item. The last one is the current decision.
    """
    undone = {int(e[2]) for e in events if e[2] is not None}
    return [
        (int(e[0]), str(e[1]))
        for e in sorted(events, key=lambda e: int(e[0]))
        if e[1] != DecisionAction.UNDO and int(e[0]) not in undone
    ]


def item_history(cur: Cursor, proposal_id: str) -> tuple[DecisionEvent, ...]:
    rows = cur.execute(
        f"SELECT {DECISION_SELECT} FROM decisions d WHERE d.item_id = ? ORDER BY d.event_id",
        [proposal_id],
    ).fetchall()
    undone = {int(r[7]) for r in rows if r[7] is not None}
    return tuple(decision_from_row(r, undone=int(r[0]) in undone) for r in rows)


def current_decision(cur: Cursor, proposal_id: str) -> DecisionEvent | None:
    return _current(item_history(cur, proposal_id))


def _current(history: Sequence[DecisionEvent]) -> DecisionEvent | None:
    active = [e for e in history if e.action is not DecisionAction.UNDO and not e.undone]
    return active[-1] if active else None


def cache_mismatches(cur: Cursor) -> list[str]:
    rows = cur.execute(
        "SELECT coalesce(p.id, c.item_id) FROM proposals p "
        "FULL OUTER JOIN current_decisions c ON c.item_id = p.id "
        "LEFT JOIN grades g ON g.proposal_seq = p.seq "
        "WHERE p.id IS NULL OR p.decision IS DISTINCT FROM c.action "
        "OR p.decision_event_id IS DISTINCT FROM c.event_id "
        "OR p.span_f1 IS DISTINCT FROM g.span_f1 OR p.reward IS DISTINCT FROM g.reward ORDER BY 1"
    ).fetchall()
    return [str(r[0]) for r in rows]


# --- review ----------------------------------------------------------------------------------------


_ITEM_SELECT: Final = (
    "p.id, p.seq, p.blueprint_id, p.tool, p.engine, p.model, p.mutation_kind, p.valid, "
    "p.span_f1, p.reward, p.decision, b.intent, b.tool, b.language, b.tags"
)


def _queue_item(r: Sequence[Any]) -> QueueItem:
    return QueueItem(
        proposal_id=r[0],
        seq=int(r[1]),
        blueprint_id=r[2],
        proposed_tool=r[3],
        engine=r[4],
        model=r[5],
        mutation_kind=r[6],
        valid=bool(r[7]),
        span_f1=r[8],
        reward=r[9],
        decision=None if r[10] is None else DecisionAction(r[10]),
        intent=r[11],
        tool=r[12],
        language=r[13],
        tags=tuple(r[14]),
    )


def review_queue(cur: Cursor, f: QueueFilters, *, offset: int, limit: int) -> QueuePage:
    where, params = queue_where(f)
    offset = max(offset, 0)
    # One statement (one snapshot): the filter runs once into an integer-only result that both the
    # count and the page read; only the page's rows are joined to their details.
    rows = cur.execute(
        f"WITH m AS MATERIALIZED (SELECT p.rowid AS rid, p.seq FROM proposals p WHERE {where}), "
        "page AS (SELECT rid FROM m ORDER BY seq LIMIT ? OFFSET ?) "
        f"SELECT (SELECT count(*) FROM m), {_ITEM_SELECT} FROM proposals p "
        "JOIN blueprints b ON b.seq = p.blueprint_seq "
        "WHERE p.rowid IN (SELECT rid FROM page) ORDER BY p.seq",
        [*params, max(limit, 0), offset],
    ).fetchall()
    if rows:
        total = int(rows[0][0])
    else:
        one = first_row(cur.execute(f"SELECT count(*) FROM proposals p WHERE {where}", params))
        total = int(one[0]) if one else 0
    return QueuePage(tuple(_queue_item(r[1:]) for r in rows), total, offset)


def _seq_of(cur: Cursor, proposal_id: str) -> int:
    row = first_row(cur.execute("SELECT seq FROM proposals WHERE id = ?", [proposal_id]))
    if row is None:
        raise StoreError(f"no proposal with id {proposal_id!r} in the store")
    return int(row[0])


def next_review_item(cur: Cursor, f: QueueFilters, after_id: str | None) -> QueueItem | None:
    where, params = queue_where(f)
    if after_id is not None:
        where += " AND p.seq > ?"
        params.append(_seq_of(cur, after_id))
    found = first_row(
        cur.execute(
            f"SELECT p.id, p.blueprint_id FROM proposals p WHERE {where} ORDER BY p.seq LIMIT 1",
            params,
        )
    )
    if found is None:
        return None
    # Two index lookups by id: a join would scan the blueprints for one row.
    proposal = first_row(
        cur.execute(
            "SELECT p.id, p.seq, p.blueprint_id, p.tool, p.engine, p.model, p.mutation_kind, "
            "p.valid, p.span_f1, p.reward, p.decision FROM proposals p WHERE p.id = ?",
            [found[0]],
        )
    )
    blueprint = first_row(
        cur.execute(
            "SELECT b.intent, b.tool, b.language, b.tags FROM blueprints b WHERE b.id = ?",
            [found[1]],
        )
    )
    if proposal is None or blueprint is None:
        return None
    return _queue_item((*proposal, *blueprint))


def queue_position(cur: Cursor, f: QueueFilters, proposal_id: str) -> tuple[int | None, int]:
    seq = _seq_of(cur, proposal_id)
    where, params = queue_where(f)
    row = first_row(
        cur.execute(
            "SELECT count(*) FILTER (WHERE p.seq <= ?), count(*), count(*) FILTER (WHERE p.seq = ?) "
            f"FROM proposals p WHERE {where}",
            [seq, seq, *params],
        )
    )
    assert row is not None
    return (int(row[0]) if row[2] else None), int(row[1])


def review_item(cur: Cursor, proposal_id: str) -> ReviewItem | None:
    proposal = get_proposal(cur, proposal_id)
    if proposal is None:
        return None
    blueprint = get_blueprint(cur, proposal.proposal.blueprint_id)
    if blueprint is None:
        raise StoreError(f"proposal {proposal_id!r} names a missing blueprint")
    execution_row = first_row(
        cur.execute(
            f"SELECT {EXECUTION_SELECT} FROM executions e WHERE e.proposal_seq = ?", [proposal.seq]
        )
    )
    grade_row = first_row(
        cur.execute(
            "SELECT file_iou, span_precision, span_recall, span_f1, n_predicted, n_expected, "
            "n_matched, reward, components FROM grades WHERE proposal_seq = ?",
            [proposal.seq],
        )
    )
    grade = reward = None
    if grade_row is not None:
        if grade_row[3] is not None:
            grade = Grade(*grade_row[:4], *(int(x) for x in grade_row[4:7]))
        reward = Reward(float(grade_row[7]), json.loads(grade_row[8]))
    history = item_history(cur, proposal_id)
    return ReviewItem(
        blueprint=blueprint,
        proposal=proposal,
        execution=None if execution_row is None else execution_from_row(execution_row),
        grade=grade,
        reward=reward,
        decision=_current(history),
        history=history,
    )
