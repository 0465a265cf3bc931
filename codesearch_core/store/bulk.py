"""A lead's bulk actions over a review filter: accept every item of the filter that is safe to
accept, or reject the filter with one reason, as one batch of final decisions that one undo takes
back (issue 29: reviewers expect it from the tools they already use).

Decisions stay events (`store.decisions`): a bulk action records one final decision per item, each
with the batch's id; undoing the batch records an undo of each. The plan (`plan`) says first how
many items it would decide and how many it leaves out and why; `apply` decides exactly the planned
items, or nothing when the filter's items changed since (another reviewer decided one meanwhile).
Functions take a cursor inside the caller's transaction; `store.queue.Queue` supplies it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

import duckdb

from codesearch_core.errors import StoreError
from codesearch_core.models import DecisionAction
from codesearch_core.store import decisions as store_decisions
from codesearch_core.store.filters import ItemFilters
from codesearch_core.store.queries import review_settings
from codesearch_core.store.queue_kinds import QueueKind
from codesearch_core.store.rows import first_row
from codesearch_core.store.schema import LIVE_EVENT_SQL
from codesearch_core.store.types import DecisionState, StaleDecisionError

Cursor = duckdb.DuckDBPyConnection

#: Why an item of the filter is left out, first match wins. Neither action re-decides what
#: reviewers settled or disagree on; an accept also leaves out what the kind's accept rules (or
#: its `accept_blocker`) refuse.
_SETTLED: Final = (
    ("in conflict", "p.decision = 'conflict'"),
    ("already decided", "p.decision IS NOT NULL"),
)
BULK_ACTIONS: Final = (DecisionAction.ACCEPT, DecisionAction.REJECT)


@dataclass(frozen=True, slots=True)
class BulkPlan:
    """What a bulk action over a filter would do: the items it decides, and those it leaves out
    by reason (reason: count, in the order of the rules)."""

    action: DecisionAction
    item_ids: tuple[str, ...]
    left_out: Mapping[str, int]

    @property
    def left_out_total(self) -> int:
        return sum(self.left_out.values())

    def summary(self) -> str:
        """ "12 will be accepted; 3 left out: 2 run failed, 1 in conflict"."""
        done = {DecisionAction.ACCEPT: "accepted", DecisionAction.REJECT: "rejected"}[self.action]
        text = f"{len(self.item_ids)} will be {done}"
        if self.left_out:
            why = ", ".join(f"{n} {reason}" for reason, n in self.left_out.items())
            text += f"; {self.left_out_total} left out: {why}"
        return text


def _rules(kind: QueueKind, action: DecisionAction) -> tuple[tuple[str, str], ...]:
    if action not in BULK_ACTIONS:
        raise StoreError(f"a bulk action accepts or rejects, not {action.value!r}")
    return _SETTLED + (kind.accept_rules if action is DecisionAction.ACCEPT else ())


def plan(
    cur: Cursor,
    kind: QueueKind,
    filters: ItemFilters | None,
    action: DecisionAction,
    *,
    now: datetime,
) -> BulkPlan:
    """The items of `filters` (the kind's own; None: its defaults, every open item) the action
    would decide, and those it leaves out, by reason."""
    rules = _rules(kind, action)
    f = kind.check_filters(filters)
    to_do = bool(f.reviewer) and DecisionState(f.decision) is DecisionState.UNDECIDED
    reviews = review_settings(cur).reviews_per_item if to_do else 1
    where, params = kind.where(f, now=now, reviews=reviews)
    why = "CASE " + " ".join(f"WHEN {rule} THEN '{name}'" for name, rule in rules) + " END"
    rule_params = kind.accept_params() if action is DecisionAction.ACCEPT else []
    rows = cur.execute(
        f"SELECT p.{kind.id_column}, {why} FROM {kind.plan_sql} WHERE {where} "
        f"ORDER BY {kind.order_sql}",
        [*rule_params, *params],
    ).fetchall()
    return _plan_of(action, [n for n, _ in rules], [(str(r[0]), r[1]) for r in rows])


def _plan_of(
    action: DecisionAction, reasons: Sequence[str], rows: Sequence[tuple[str, str | None]]
) -> BulkPlan:
    counts = dict.fromkeys(reasons, 0)
    for _, reason in rows:
        if reason is not None:
            counts[str(reason)] += 1
    return BulkPlan(
        action,
        tuple(item_id for item_id, reason in rows if reason is None),
        {name: n for name, n in counts.items() if n},
    )


def apply(
    cur: Cursor,
    kind: QueueKind,
    filters: ItemFilters | None,
    action: DecisionAction,
    reviewer: str,
    *,
    expected: Sequence[str],
    reason: str,
    note: str,
    ts: datetime,
) -> tuple[str, BulkPlan]:
    """Decide the planned items as one batch of final decisions: (batch id, the plan done).

    `expected` is the plan the lead confirmed; when the filter selects other items now,
    StaleDecisionError and nothing is written: they confirmed a count that is no longer true.
    """
    now = plan(cur, kind, filters, action, now=ts)
    if set(now.item_ids) != set(expected):
        raise StaleDecisionError(
            f"the filter's items changed since they were counted ({len(expected)} then, "
            f"{len(now.item_ids)} now): nothing was decided; count again"
        )
    if not now.item_ids:
        raise StoreError(f"nothing to {action.value}: {now.summary()}")
    batch = f"bulk-{uuid.uuid4().hex[:12]}"
    for item_id in now.item_ids:
        store_decisions.record_decision(
            cur, item_id, action, reviewer, note=note, reason=reason, ts=ts, final=True,
            kind=kind.name, batch=batch,
        )  # fmt: skip
    return batch, now


def batch_of(cur: Cursor, event_id: int) -> str | None:
    row = first_row(cur.execute("SELECT batch_id FROM decisions WHERE event_id = ?", [event_id]))
    return None if row is None or row[0] is None else str(row[0])


def batch_size(cur: Cursor, batch: str) -> int:
    """How many of the batch's events no undo cancelled yet."""
    row = first_row(
        cur.execute(
            f"SELECT count(*) FROM decisions WHERE batch_id = ? AND {LIVE_EVENT_SQL}", [batch]
        )
    )
    return int(row[0]) if row else 0


def undo_batch(
    cur: Cursor, reviewer: str, batch: str, *, ts: datetime, kind: str
) -> list[tuple[str, int]]:
    """Undo the reviewer's live events of the batch: (item, undo event id) of each, in order.

    An item the reviewer decided again after the batch keeps that later decision: undo takes back
    the bulk action, not what came after it.
    """
    rows = cur.execute(
        f"SELECT item_id, event_id FROM decisions WHERE batch_id = ? AND reviewer = ? "
        f"AND {LIVE_EVENT_SQL} ORDER BY event_id",
        [batch, reviewer],
    ).fetchall()
    undone: list[tuple[str, int]] = []
    for item_id, event_id in rows:
        latest = store_decisions.last_undoable(cur, reviewer, str(item_id), kind=kind)
        if latest is not None and latest[1] == int(event_id):
            undone.append(
                store_decisions.undo_last(cur, reviewer, ts=ts, item_id=str(item_id), kind=kind)
            )
    return undone
