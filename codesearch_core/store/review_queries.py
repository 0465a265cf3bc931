"""Review reads: the queue and its pages, the next item, an item's place, the review card, each
item's decision history and the caches' check. Each function takes a cursor; `Store` supplies it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

import duckdb

from codesearch_core.errors import StoreError
from codesearch_core.models import Grade, Reward
from codesearch_core.store.filters import QueueFilters
from codesearch_core.store.queries import get_blueprint, get_proposal, queue_where, review_settings
from codesearch_core.store.rows import (
    DECISION_SELECT,
    EXECUTION_SELECT,
    decision_from_row,
    execution_from_row,
    first_row,
)
from codesearch_core.store.schema import GRADING_KEY_SQL, LIVE_EVENT_SQL, item_state_update
from codesearch_core.store.types import (
    DecisionEvent,
    DecisionState,
    QueueItem,
    QueuePage,
    ReviewItem,
)

Cursor = duckdb.DuckDBPyConnection


# --- decisions -------------------------------------------------------------------------------------


def item_history(cur: Cursor, item_id: str, kind: str = "proposal") -> tuple[DecisionEvent, ...]:
    rows = cur.execute(
        f"SELECT {DECISION_SELECT} FROM decisions d WHERE d.kind = ? AND d.item_id = ? "
        "ORDER BY d.event_id",
        [kind, item_id],
    ).fetchall()
    undone = {int(r[7]) for r in rows if r[7] is not None}
    return tuple(decision_from_row(r, undone=int(r[0]) in undone) for r in rows)


def cache_mismatches(cur: Cursor) -> list[str]:
    """Ids of items whose cached votes, state or grade differ from what their sources say."""
    votes = cur.execute(
        "WITH live AS (SELECT item_id, reviewer, action, event_id FROM decisions "
        f"WHERE kind = 'proposal' AND action <> 'undo' AND NOT final AND {LIVE_EVENT_SQL}), "
        "want AS (SELECT item_id, reviewer, arg_max(action, event_id) AS action, "
        "max(event_id) AS event_id FROM live GROUP BY ALL) "
        "SELECT coalesce(w.item_id, v.item_id) FROM want w "
        "FULL OUTER JOIN (SELECT * FROM votes WHERE kind = 'proposal') v "
        "ON v.item_id = w.item_id AND v.reviewer = w.reviewer "
        "WHERE w.item_id IS NULL OR v.item_id IS NULL OR w.action <> v.action "
        "OR w.event_id <> v.event_id"
    ).fetchall()
    grades = cur.execute(
        "SELECT p.id FROM proposals p LEFT JOIN grades g ON g.proposal_seq = p.seq "
        "WHERE p.span_f1 IS DISTINCT FROM g.span_f1 OR p.reward IS DISTINCT FROM g.reward"
    ).fetchall()
    orphans = cur.execute(
        "SELECT DISTINCT item_id FROM decisions WHERE kind = 'proposal' "
        "AND item_id NOT IN (SELECT id FROM proposals)"
    ).fetchall()
    # The item state: recompute it into a scratch copy and compare.
    n = review_settings(cur).reviews_per_item
    cur.execute(
        "CREATE TEMP TABLE IF NOT EXISTS state_check AS "
        "SELECT id, decision, decision_event_id, n_votes FROM proposals LIMIT 0"
    )
    cur.execute("DELETE FROM state_check")
    cur.execute(
        "INSERT INTO state_check SELECT id, decision, decision_event_id, n_votes FROM proposals"
    )
    recomputed = (
        item_state_update(reviews_per_item=n)
        .replace("UPDATE proposals SET", "UPDATE state_check SET")
        .replace("WHERE proposals.id = s.id", "WHERE state_check.id = s.id")
    )
    cur.execute(recomputed)
    states = cur.execute(
        "SELECT p.id FROM proposals p JOIN state_check c ON c.id = p.id "
        "WHERE p.decision IS DISTINCT FROM c.decision "
        "OR p.decision_event_id IS DISTINCT FROM c.decision_event_id "
        "OR p.n_votes IS DISTINCT FROM c.n_votes"
    ).fetchall()
    cur.execute("DROP TABLE state_check")
    return sorted({str(r[0]) for r in [*votes, *grades, *orphans, *states]})


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
        decision=r[10],
        intent=r[11],
        tool=r[12],
        language=r[13],
        tags=tuple(r[14]),
    )


def _where(cur: Cursor, f: QueueFilters) -> tuple[str, list[Any]]:
    # Only a reviewer's to-do queue depends on the reviews an item needs.
    to_do = bool(f.reviewer) and DecisionState(f.decision) is DecisionState.UNDECIDED
    return queue_where(f, reviews=review_settings(cur).reviews_per_item if to_do else 1)


def review_queue(cur: Cursor, f: QueueFilters, *, offset: int, limit: int) -> QueuePage:
    where, params = _where(cur, f)
    offset = max(offset, 0)
    if limit <= 0:  # the count alone (the card's "left to do"): no page to build
        one = first_row(cur.execute(f"SELECT count(*) FROM proposals p WHERE {where}", params))
        return QueuePage((), int(one[0]) if one else 0, offset)
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
    where, params = _where(cur, f)
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
    where, params = _where(cur, f)
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
            "n_matched, reward, components, graded_against FROM grades WHERE proposal_seq = ?",
            [proposal.seq],
        )
    )
    state = first_row(
        cur.execute(
            f"SELECT p.decision, p.decision_event_id, {GRADING_KEY_SQL} FROM proposals p "
            "JOIN blueprints b ON b.seq = p.blueprint_seq WHERE p.id = ?",
            [proposal_id],
        )
    )
    assert state is not None
    votes = {
        str(r[0]): (str(r[1]), int(r[2]))
        for r in cur.execute(
            "SELECT reviewer, action, event_id FROM votes WHERE kind = 'proposal' AND item_id = ? "
            "ORDER BY event_id",
            [proposal_id],
        ).fetchall()
    }
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
        decision=next((e for e in history if e.event_id == state[1]), None),
        history=history,
        state=state[0],
        votes=votes,
        grading_key=str(state[2]),
        grade_current=grade_row is None or grade_row[9] == state[2],
    )
