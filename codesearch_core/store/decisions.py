"""Reviewers' decisions: votes, undo, a lead's final decision, leases and the review settings.

Every function takes a cursor inside the caller's transaction (`Store._write`). Each write about an
item bumps `proposals.version`, so two concurrent writes about one item conflict and one of them
is retried on the new state: two reviewers cannot both take the last review an item needs, and the
cached item state (`schema.item_state_update`) never misses a vote.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Final

import duckdb

from codesearch_core.errors import StoreError
from codesearch_core.models import DecisionAction
from codesearch_core.store.queries import queue_where, review_settings
from codesearch_core.store.rows import first_row
from codesearch_core.store.schema import LIVE_EVENT_SQL, item_state_update
from codesearch_core.store.types import (
    DecisionState,
    QueueFilters,
    ReviewSettings,
    StaleDecisionError,
)

Cursor = duckdb.DuckDBPyConnection

MAX_REVIEWER_LENGTH: Final = 80
#: `seen` default of `record_decision`: do not check what the reviewer saw.
UNCHECKED: Final = -1


def check_reviewer(name: str) -> str:
    """The reviewer name, trimmed; a StoreError that says what is wrong with a bad one. `Store`
    checks every name it is given, once, before its transaction; the functions below trust it."""
    name = name.strip()
    if not name:
        raise StoreError(
            "a reviewer name is needed to record a decision: type yours in the sidebar"
        )
    if len(name) > MAX_REVIEWER_LENGTH:
        raise StoreError(
            f"a reviewer name has at most {MAX_REVIEWER_LENGTH} characters (this one has "
            f"{len(name)})"
        )
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in name):
        raise StoreError("a reviewer name cannot hold control characters or line breaks")
    return name


# --- settings ---------------------------------------------------------------------------------


def set_settings(cur: Cursor, settings: ReviewSettings) -> None:
    if not 1 <= settings.reviews_per_item <= ReviewSettings.MAX_REVIEWS:
        raise StoreError(f"reviews per item must be between 1 and {ReviewSettings.MAX_REVIEWS}")
    if not 0 < settings.lease_minutes <= ReviewSettings.MAX_LEASE_MINUTES:
        raise StoreError(
            f"a lease lasts more than 0 and at most {ReviewSettings.MAX_LEASE_MINUTES:g} minutes"
        )
    before = review_settings(cur)
    for key, value in (
        ("reviews_per_item", settings.reviews_per_item),
        ("lease_minutes", settings.lease_minutes),
    ):
        cur.execute("INSERT OR REPLACE INTO settings VALUES (?, ?)", [key, json.dumps(value)])
    if before.reviews_per_item != settings.reviews_per_item:
        # Every item's state depends on it; only the rows whose state changes are written.
        cur.execute(item_state_update(reviews_per_item=settings.reviews_per_item))


# --- votes ------------------------------------------------------------------------------------


def _bump(cur: Cursor, item_id: str) -> tuple[bool, bool]:
    """Make this transaction conflict with any other write about the item; (valid, ran ok)."""
    row = first_row(
        cur.execute(
            "UPDATE proposals SET version = version + 1 WHERE id = ? RETURNING valid, seq",
            [item_id],
        )
    )
    if row is None:
        raise StoreError(f"no proposal with id {item_id!r} in the store")
    ran = first_row(cur.execute("SELECT ok FROM executions WHERE proposal_seq = ?", [row[1]]))
    return bool(row[0]), bool(ran and ran[0])


def _vote_of(cur: Cursor, item_id: str, reviewer: str) -> tuple[int, str] | None:
    row = first_row(
        cur.execute(
            "SELECT event_id, action FROM votes WHERE item_id = ? AND reviewer = ?",
            [item_id, reviewer],
        )
    )
    return None if row is None else (int(row[0]), str(row[1]))


def _refresh_vote(cur: Cursor, item_id: str, reviewer: str) -> None:
    """The reviewer's vote on the item from the log: their latest live non-final event."""
    row = first_row(
        cur.execute(
            "SELECT event_id, action FROM decisions WHERE item_id = ? AND reviewer = ? "
            f"AND action <> 'undo' AND NOT final AND {LIVE_EVENT_SQL} "
            "ORDER BY event_id DESC LIMIT 1",
            [item_id, reviewer],
        )
    )
    if row is None:
        cur.execute("DELETE FROM votes WHERE item_id = ? AND reviewer = ?", [item_id, reviewer])
    else:
        cur.execute(
            "INSERT OR REPLACE INTO votes VALUES (?, ?, ?, ?)",
            [item_id, reviewer, row[1], int(row[0])],
        )


def _refresh_state(cur: Cursor, item_id: str) -> None:
    n = review_settings(cur).reviews_per_item
    cur.execute(item_state_update(reviews_per_item=n, item_filter="= ?"), [item_id] * 3)


def record_decision(
    cur: Cursor,
    item_id: str,
    action: DecisionAction,
    reviewer: str,
    *,
    note: str,
    reason: str,
    ts: datetime,
    seen: int | None = UNCHECKED,
    final: bool = False,
) -> int:
    """Record `reviewer`'s accept/reject/skip on an item (or, `final`, a lead's final decision).

    `seen` is the event id of the reviewer's own vote when the card was drawn (None: they had
    none); if it changed since (another tab of the same reviewer decided it), StaleDecisionError
    and nothing is written. Accepting needs a call that ran without an error.
    """
    if action is DecisionAction.UNDO:
        raise StoreError("an undo is recorded with undo_last, not as a decision")
    if final and action not in (DecisionAction.ACCEPT, DecisionAction.REJECT):
        raise StoreError("a final decision accepts or rejects")
    valid, ran_ok = _bump(cur, item_id)
    if action is DecisionAction.ACCEPT and not valid:
        raise StoreError(
            f"proposal {item_id!r} has no valid tool call, so it cannot be accepted: reject it, "
            "or edit the call and accept the new proposal"
        )
    if action is DecisionAction.ACCEPT and not ran_ok:
        raise StoreError(
            f"proposal {item_id!r} has not run without an error, so it cannot be accepted: "
            "run it (Verify), or reject it; only verified calls are training data"
        )
    if seen != UNCHECKED and not final:
        vote = _vote_of(cur, item_id, reviewer)
        if (vote[0] if vote else None) != seen:
            raise StaleDecisionError(
                f"{reviewer} already decided this item elsewhere (another tab or window: "
                f"{vote[1] if vote else 'undone'}); nothing was recorded here"
            )
    row = first_row(
        cur.execute(
            "INSERT INTO decisions (item_id, action, undoes, reviewer, note, reason, ts, final) "
            "VALUES (?, ?, NULL, ?, ?, ?, ?, ?) RETURNING event_id",
            [item_id, action.value, reviewer, note, reason, ts, final],
        )
    )
    assert row is not None
    event_id = int(row[0])
    if not final:
        cur.execute(
            "INSERT OR REPLACE INTO votes VALUES (?, ?, ?, ?)",
            [item_id, reviewer, action.value, event_id],
        )
    cur.execute("DELETE FROM leases WHERE item_id = ? AND reviewer = ?", [item_id, reviewer])
    _refresh_state(cur, item_id)
    return event_id


def undo_last(
    cur: Cursor, reviewer: str, *, ts: datetime, item_id: str | None = None
) -> tuple[str, int]:
    """Cancel the reviewer's own latest live event (on `item_id`, if given): (item id, event id).

    Only the reviewer's own events: another reviewer's decision is theirs to undo.
    """
    target = last_undoable(cur, reviewer, item_id)
    if target is None:
        where = f" on item {item_id!r}" if item_id else ""
        raise StoreError(f"{reviewer} has no decision left to undo{where}")
    item, undone, _ = target
    _bump(cur, item)
    row = first_row(
        cur.execute(
            "INSERT INTO decisions (item_id, action, undoes, reviewer, note, reason, ts, final) "
            "VALUES (?, 'undo', ?, ?, '', '', ?, false) RETURNING event_id",
            [item, undone, reviewer, ts],
        )
    )
    assert row is not None
    _refresh_vote(cur, item, reviewer)
    _refresh_state(cur, item)
    return item, int(row[0])


def last_undoable(
    cur: Cursor, reviewer: str, item_id: str | None = None
) -> tuple[str, int, str] | None:
    """(item id, event id, action) of the reviewer's latest live event (on `item_id`, if given)."""
    on_item = "AND item_id = ?" if item_id else ""
    row = first_row(
        cur.execute(
            f"SELECT item_id, event_id, action FROM decisions WHERE reviewer = ? {on_item} "
            f"AND action <> 'undo' AND {LIVE_EVENT_SQL} ORDER BY event_id DESC LIMIT 1",
            [reviewer.strip(), *([item_id] if item_id else [])],
        )
    )
    return None if row is None else (str(row[0]), int(row[1]), str(row[2]))


# --- leases and the reviewer's queue ------------------------------------------------------------


def lease_next(cur: Cursor, filters: QueueFilters, reviewer: str, *, now: datetime) -> str | None:
    """The next item `reviewer` should review under `filters`, leased to them; None when done.

    An item already leased to the reviewer comes first (a reload resumes it), then queue order.
    """
    settings = review_settings(cur)
    f = replace(filters, decision=DecisionState.UNDECIDED, reviewer=reviewer)
    where, params = queue_where(f, now=now, reviews=settings.reviews_per_item)
    row = first_row(
        cur.execute(
            f"SELECT p.id FROM proposals p WHERE {where} ORDER BY EXISTS (SELECT 1 FROM leases l "
            "WHERE l.item_id = p.id AND l.reviewer = ? AND l.expires_at > ?) DESC, p.seq LIMIT 1",
            [*params, reviewer, now],
        )
    )
    if row is None:
        return None
    item_id = str(row[0])
    take_lease(cur, item_id, reviewer, now=now, minutes=settings.lease_minutes)
    return item_id


def take_lease(
    cur: Cursor, item_id: str, reviewer: str, *, now: datetime, minutes: float | None = None
) -> None:
    """Lease (or renew the lease of) an item to a reviewer.

    Called on every draw of the card, so a lease with more than half its time left is kept as it
    is: no write, no conflict with other reviewers. Only the reviewer's own expired leases are
    dropped (readers ignore expired ones anyway; deleting others' would make reviewers conflict).
    """
    if minutes is None:
        minutes = review_settings(cur).lease_minutes
    held = first_row(
        cur.execute(
            "SELECT expires_at FROM leases WHERE item_id = ? AND reviewer = ?", [item_id, reviewer]
        )
    )
    if held is not None and held[0] > now + timedelta(minutes=minutes / 2):
        return
    _bump(cur, item_id)
    cur.execute("DELETE FROM leases WHERE reviewer = ? AND expires_at <= ?", [reviewer, now])
    cur.execute(
        "INSERT OR REPLACE INTO leases VALUES (?, ?, ?)",
        [item_id, reviewer, now + timedelta(minutes=minutes)],
    )


def release_leases(cur: Cursor, reviewer: str, item_ids: Sequence[str] = ()) -> None:
    """Give back the reviewer's leases (all, or those on `item_ids`)."""
    if item_ids:
        cur.execute(
            "DELETE FROM leases WHERE reviewer = ? AND item_id IN (SELECT unnest(?::VARCHAR[]))",
            [reviewer, list(item_ids)],
        )
    else:
        cur.execute("DELETE FROM leases WHERE reviewer = ?", [reviewer])
