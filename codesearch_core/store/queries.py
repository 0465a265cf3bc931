"""Read queries over the store. Each function takes a cursor; `Store` supplies it.

Speed (see benchmarks/bench_store.py): the queue filters on `proposals` columns, reaches blueprints
and grades through semi-joins on integer keys, and joins the details for one page only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Final

import duckdb

from codesearch_core.models import Blueprint, Span
from codesearch_core.store.filters import ItemFilters, QueueFilters
from codesearch_core.store.rows import (
    BLUEPRINT_SELECT,
    PROPOSAL_SELECT,
    blueprint_from_row,
    first_row,
    spans_from_json,
    stored_proposal_from_row,
    utc_now,
)
from codesearch_core.store.schema import GRADING_KEY_SQL
from codesearch_core.store.text_match import (
    blueprint_text_clause,
    like_pattern,
    proposal_text_clause,
)
from codesearch_core.store.types import (
    BlueprintFilters,
    BlueprintPage,
    BlueprintRevision,
    DecisionState,
    PendingExecution,
    ReviewSettings,
    StoredProposal,
)

Cursor = duckdb.DuckDBPyConnection

#: Item states that do not depend on who asks, over a queue's table `p` ({kind}: the kind's name,
#: {id}: its id column; both from `store.queue_kinds`, never from input).
_DECISION_SQL: Final[dict[DecisionState, str | None]] = {
    DecisionState.UNDECIDED: "p.decision IS NULL",
    DecisionState.ACCEPTED: "p.decision = 'accept'",
    DecisionState.REJECTED: "p.decision = 'reject'",
    DecisionState.CONFLICT: "p.decision = 'conflict'",
    DecisionState.SKIPPED: "p.decision IS NULL AND EXISTS "
    "(SELECT 1 FROM votes v WHERE v.kind = '{kind}' AND v.item_id = p.{id} AND v.action = 'skip')",
    DecisionState.MINE: "EXISTS (SELECT 1 FROM votes v WHERE v.kind = '{kind}' AND v.item_id = p.{id})",
    DecisionState.DECIDED: "p.decision IN ('accept', 'reject')",
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
    if f.split:
        clauses.append("b.split = ?")
        params.append(f.split)
    # Last: `list_blueprints` widens this clause to the id too.
    if f.text:
        clauses.append("b.intent ILIKE ? ESCAPE '\\'")
        params.append(like_pattern(f.text))
    return clauses, params


def review_settings(cur: Cursor) -> ReviewSettings:
    rows = cur.execute("SELECT key, value FROM settings").fetchall()
    values = {str(k): json.loads(v) for k, v in rows}
    return ReviewSettings(
        reviews_per_item=int(values.get("reviews_per_item", 1)),
        lease_minutes=float(values.get("lease_minutes", 5)),
    )


def decision_clause(
    f: ItemFilters,
    *,
    now: datetime | None = None,
    reviews: int = 1,
    kind: str = "proposal",
    table: str = "proposals",
    id_column: str = "id",
) -> tuple[str | None, list[Any]]:
    """The WHERE clause over the queue's table `p` (`proposals` unless `kind`, `table` and
    `id_column` name another queue's) for `f.decision` (and `f.reviewer`).

    A reviewer's "undecided" is their to-do list: open items they have not voted on that other
    reviewers (their votes plus their live leases) have not already taken up to `reviews`.
    """
    state = DecisionState(f.decision)
    who = (f.reviewer or "").strip()
    names = {"kind": kind, "id": id_column}
    if not who or state not in (DecisionState.UNDECIDED, DecisionState.SKIPPED, DecisionState.MINE):
        sql = _DECISION_SQL[state]
        return (None if sql is None else sql.format(**names)), []
    voted = "EXISTS (SELECT 1 FROM votes v WHERE v.kind = '{kind}' AND v.item_id = p.{id} AND v.reviewer = ?"
    if state is DecisionState.SKIPPED:
        return (voted + " AND v.action = 'skip')").format(**names), [who]
    if state is DecisionState.MINE:
        return (voted + ")").format(**names), [who]
    # "Votes plus others' live leases < reviews", with the leases as one uncorrelated set (the few
    # leased items that are full): a count per proposal row cost 3x as much at 100,000 items.
    return (
        f"p.decision IS NULL AND p.n_votes < ? AND NOT {voted.format(**names)}) "
        f"AND p.{id_column} NOT IN (SELECT l.item_id FROM leases l JOIN {table} q "
        f"ON q.{id_column} = l.item_id WHERE l.kind = '{kind}' AND l.reviewer <> ? "
        "AND l.expires_at > ? GROUP BY l.item_id, q.n_votes HAVING q.n_votes + count(*) >= ?)",
        [reviews, who, who, now or utc_now(), reviews],
    )


def item_where(
    f: ItemFilters,
    field_sql: Mapping[str, str],
    *,
    kind: str,
    table: str,
    id_column: str,
    now: datetime | None = None,
    reviews: int = 1,
) -> tuple[str, list[Any]]:
    """The WHERE condition over a queue's table `p` for filters whose fields each become one
    clause of `field_sql` (its `?`s all take the field's value; `text`'s as a LIKE pattern), and
    the state as `decision_clause` says."""
    clauses: list[str] = []
    params: list[Any] = []
    for name, sql in field_sql.items():
        value = getattr(f, name)
        if value is None or value == "":
            continue
        clauses.append(sql)
        params += [like_pattern(value) if name == "text" else value] * sql.count("?")
    state, state_params = decision_clause(
        f, now=now, reviews=reviews, kind=kind, table=table, id_column=id_column
    )
    if state:
        clauses.append(state)
        params += state_params
    return (" AND ".join(clauses) or "TRUE"), params


def proposal_clauses(
    f: QueueFilters, *, decision: bool = True, now: datetime | None = None, reviews: int = 1
) -> tuple[list[str], list[Any]]:
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
    if decision:
        state, state_params = decision_clause(f, now=now, reviews=reviews)
        if state:
            clauses.append(state)
            params += state_params
    return clauses, params


def queue_where(
    f: QueueFilters, *, now: datetime | None = None, reviews: int = 1
) -> tuple[str, list[Any]]:
    """The WHERE condition for proposals `p` matching `f` (blueprint filters as a semi-join)."""
    clauses, params = proposal_clauses(f, now=now, reviews=reviews)
    # The queue's text matches the proposal too (its pattern, a note), not only the blueprint.
    bp_clauses, bp_params = blueprint_clauses(replace(f, text=None))
    if f.text:
        text, text_params = proposal_text_clause(f.text)
        clauses.append(text)
        params += text_params
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
        # The search box: the intent, the id, the notes, the pattern, or a proposal's.
        clauses[-1], params[-1:] = blueprint_text_clause(f.text)
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
        f"SELECT p.id, p.call, p.error, {GRADING_KEY_SQL}, b.corpus, b.expected "
        "FROM proposals p JOIN blueprints b ON b.seq = p.blueprint_seq "
        f"WHERE p.seq NOT IN (SELECT proposal_seq FROM executions) {valid} "
        "ORDER BY p.seq LIMIT ?",
        [max(limit, 0)],
    ).fetchall()
    expected: dict[str, tuple[Span, ...]] = {}  # a blueprint's spans, parsed once for its proposals
    out = []
    for r in rows:
        spans = expected.get(r[5])
        if spans is None:
            spans = expected[r[5]] = spans_from_json(r[5])
        out.append(
            PendingExecution(
                proposal_id=r[0],
                call_json=r[1],
                corpus=r[4],
                expected=spans,
                invalid_reason="" if r[1] is not None else (r[2] or "no valid tool call"),
                grading_key=r[3],
            )
        )
    return out
