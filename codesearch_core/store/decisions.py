"""Reviewers' decisions: votes, undo, a lead's final decision, leases and the review settings.

One code path for every kind of item (`store.queue_kinds`: proposals, drafts, drift, episodes,
QA items); each function takes the item's kind and a cursor inside the caller's transaction
(`store.queue.Queue` supplies both). Each write about an item bumps its row's `version`
(`rows.bump_version`), so two concurrent writes about one item conflict and one of them is retried
on the new state: two reviewers cannot both take the last review an item needs, and the cached
item state (`schema_queue.item_state_update`) never misses a vote.
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
from codesearch_core.store import to_do
from codesearch_core.store.filters import ItemFilters
from codesearch_core.store.guidelines import CURRENT_VERSION_SQL as CURRENT_GUIDELINES_SQL
from codesearch_core.store.queries import review_settings
from codesearch_core.store.queue_kinds import KINDS, Settled, kind_of
from codesearch_core.store.rows import bump_version, first_row
from codesearch_core.store.schema_queue import LIVE_EVENT_SQL, item_state_update
from codesearch_core.store.types import DecisionState, ReviewSettings, StaleDecisionError

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


def set_settings(cur: Cursor, settings: ReviewSettings) -> dict[str, int]:
    """Store the settings; how many items of each kind the change opened again (a positive
    count: they need more reviews now) or settled (negative), for the kinds where it changed
    any."""
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
    opened: dict[str, int] = {}
    if before.reviews_per_item != settings.reviews_per_item:
        # Every item's state depends on it; only the rows whose state changes are written.
        for kind in KINDS.values():
            if kind.shared_reviews:
                was = state_counts(cur, kind.name)["open"]
                cur.execute(_state_update(kind.name, settings.reviews_per_item))
                if change := state_counts(cur, kind.name)["open"] - was:
                    opened[kind.name] = change
    return opened


# --- votes ------------------------------------------------------------------------------------


def _state_update(kind: str, reviews: int, item_filter: str = "") -> str:
    k = KINDS[kind]
    return item_state_update(
        table=k.table, id_column=k.id_column, kind=kind, reviews_per_item=reviews,
        item_filter=item_filter,
    )  # fmt: skip


def _bump(cur: Cursor, kind: str, item_id: str) -> int:
    """Make this transaction conflict with any other write about the item; its new version."""
    k = kind_of(kind)
    return bump_version(cur, k.table, k.id_column, item_id, what=kind)


def _vote_of(cur: Cursor, kind: str, item_id: str, reviewer: str) -> tuple[int, str] | None:
    row = first_row(
        cur.execute(
            "SELECT event_id, action FROM votes WHERE kind = ? AND item_id = ? AND reviewer = ?",
            [kind, item_id, reviewer],
        )
    )
    return None if row is None else (int(row[0]), str(row[1]))


def _set_vote(cur: Cursor, kind: str, item_id: str, reviewer: str, action: str, event: int) -> None:
    cur.execute(
        "INSERT OR REPLACE INTO votes (item_id, reviewer, action, event_id, kind) "
        "VALUES (?, ?, ?, ?, ?)",
        [item_id, reviewer, action, event, kind],
    )


def _refresh_vote(cur: Cursor, kind: str, item_id: str, reviewer: str) -> None:
    """The reviewer's vote on the item from the log: their latest live non-final event."""
    row = first_row(
        cur.execute(
            "SELECT event_id, action FROM decisions WHERE kind = ? AND item_id = ? AND reviewer = ? "
            f"AND action <> 'undo' AND NOT final AND {LIVE_EVENT_SQL} "
            "ORDER BY event_id DESC LIMIT 1",
            [kind, item_id, reviewer],
        )
    )
    if row is None:
        cur.execute(
            "DELETE FROM votes WHERE kind = ? AND item_id = ? AND reviewer = ?",
            [kind, item_id, reviewer],
        )
    else:
        _set_vote(cur, kind, item_id, reviewer, str(row[1]), int(row[0]))


def _state(cur: Cursor, kind: str, item_id: str) -> tuple[str | None, str | None]:
    """The item's cached state and who cast the event that settled it."""
    k = KINDS[kind]
    row = first_row(
        cur.execute(
            f"SELECT t.decision, d.reviewer FROM {k.table} t LEFT JOIN decisions d "
            f"ON d.event_id = t.decision_event_id WHERE t.{k.id_column} = ?",
            [item_id],
        )
    )
    return (None, None) if row is None else (row[0], row[1])


def _refresh_state(
    cur: Cursor, kind: str, item_id: str, reviewer: str, note: str, ts: datetime
) -> None:
    k = KINDS[kind]
    n = _reviews(kind, review_settings(cur))
    if k.settle is None:
        # Nothing hangs on the change (a proposal): skip the two reads of the state.
        cur.execute(_state_update(kind, n, "= ?"), [item_id] * 3)
        return
    before = _state(cur, kind, item_id)[0]
    cur.execute(_state_update(kind, n, "= ?"), [item_id] * 3)
    after = _state(cur, kind, item_id)[0]
    if before != after:
        k.settle(
            cur, item_id, Settled(before, after, reviewer, note, ts, record_decision, undo_last)
        )


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
    kind: str,
    batch: str | None = None,
    version: int | None = None,
) -> int:
    """Record `reviewer`'s accept/reject/skip on an item of `kind` (or, `final`, a lead's final
    decision).

    `seen` is the event id of the reviewer's own vote when the card was drawn (None: they had
    none); if it changed since (another tab of the same reviewer decided it), StaleDecisionError
    and nothing is written. Deciding again (a reviewer who stepped back to an item) is a new event
    that replaces their vote, never a second vote. What blocks an accept is the kind's. `batch`:
    the id of the bulk action it is part of (`store.bulk`). `version`: the item's version its
    card showed; StaleDecisionError when it changed since (a draft's intent edited in another
    tab). The event keeps the guideline version in force, whatever the kind.
    """
    if action is DecisionAction.UNDO:
        raise StoreError("an undo is recorded with undo_last, not as a decision")
    if final and action not in (DecisionAction.ACCEPT, DecisionAction.REJECT):
        raise StoreError("a final decision accepts or rejects")
    k = kind_of(kind)
    bumped = _bump(cur, kind, item_id)
    # The version the card showed, plus this write's bump.
    if version is not None and bumped != version + 1:
        raise StaleDecisionError(f"this {kind} changed since it was shown: look at it again")
    if action is DecisionAction.ACCEPT and k.accept_blocker is not None:
        why = k.accept_blocker(cur, item_id)
        if why:
            raise StoreError(why)
    vote = _vote_of(cur, kind, item_id, reviewer)
    if seen != UNCHECKED and not final and (vote[0] if vote else None) != seen:
        raise StaleDecisionError(
            f"{reviewer} already decided this item elsewhere (another tab or window: "
            f"{vote[1] if vote else 'undone'}); nothing was recorded here"
        )
    if not k.shared_reviews and not final:
        state, by = _state(cur, kind, item_id)
        if state in ("accept", "reject"):
            # One review settles such an item: a second reviewer would only put it in conflict,
            # and its reviewer changes their mind by Undo (which takes back what it did).
            raise StoreError(f"this {kind} was {state}ed by {by} already")
    row = first_row(
        cur.execute(
            "INSERT INTO decisions (item_id, action, undoes, reviewer, note, reason, ts, final, "
            "kind, batch_id, guideline_version) VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, "
            f"{CURRENT_GUIDELINES_SQL}) RETURNING event_id",
            [item_id, action.value, reviewer, note, reason, ts, final, kind, batch],
        )
    )
    assert row is not None
    event_id = int(row[0])
    if not final:
        _set_vote(cur, kind, item_id, reviewer, action.value, event_id)
    cur.execute(
        "DELETE FROM leases WHERE kind = ? AND item_id = ? AND reviewer = ?",
        [kind, item_id, reviewer],
    )
    _refresh_state(cur, kind, item_id, reviewer, note, ts)
    return event_id


def undo_last(
    cur: Cursor,
    reviewer: str,
    *,
    ts: datetime,
    item_id: str | None = None,
    kind: str,
) -> tuple[str, int]:
    """Cancel the reviewer's own latest live event on an item of `kind` (on `item_id`, if given):
    (item id, event id). Only the reviewer's own events: another's decision is theirs to undo.
    """
    target = last_undoable(cur, reviewer, item_id, kind=kind)
    if target is None:
        where = f" on item {item_id!r}" if item_id else ""
        raise StoreError(f"{reviewer} has no decision left to undo{where}")
    item, undone, _ = target
    _bump(cur, kind, item)
    row = first_row(
        cur.execute(
            "INSERT INTO decisions (item_id, action, undoes, reviewer, note, reason, ts, final, "
            "kind) VALUES (?, 'undo', ?, ?, '', '', ?, false, ?) RETURNING event_id",
            [item, undone, reviewer, ts, kind],
        )
    )
    assert row is not None
    _refresh_vote(cur, kind, item, reviewer)
    _refresh_state(cur, kind, item, reviewer, "", ts)
    return item, int(row[0])


def last_undoable(
    cur: Cursor, reviewer: str, item_id: str | None = None, *, kind: str
) -> tuple[str, int, str] | None:
    """(item id, event id, action) of the reviewer's latest live event on an item of `kind` (on
    `item_id`, if given)."""
    on_item = "AND item_id = ?" if item_id else ""
    row = first_row(
        cur.execute(
            f"SELECT item_id, event_id, action FROM decisions WHERE reviewer = ? AND kind = ? "
            f"{on_item} AND action <> 'undo' AND {LIVE_EVENT_SQL} ORDER BY event_id DESC LIMIT 1",
            [reviewer.strip(), kind, *([item_id] if item_id else [])],
        )
    )
    return None if row is None else (str(row[0]), int(row[1]), str(row[2]))


def seen_items(cur: Cursor, reviewer: str, *, kind: str) -> list[tuple[str, str | None]]:
    """The items of `kind` the reviewer decided (skips included), in the order they first did,
    each with their vote now (None: undone): what Previous and Next step through."""
    # No join with the kind's table: an item with a decision is never deleted (a QA item only
    # while undecided), and the join read every item's id (6 ms a card at 100k episodes).
    rows = cur.execute(
        "SELECT d.item_id, v.action FROM decisions d "
        "LEFT JOIN votes v ON v.kind = d.kind AND v.item_id = d.item_id "
        "AND v.reviewer = d.reviewer WHERE d.reviewer = ? AND d.kind = ? AND d.action <> 'undo' "
        "AND NOT d.final GROUP BY d.item_id, v.action ORDER BY min(d.event_id)",
        [reviewer, kind],
    ).fetchall()
    return [(str(r[0]), None if r[1] is None else str(r[1])) for r in rows]


def state_counts(cur: Cursor, kind: str) -> dict[str, int]:
    """Items of `kind` by review state: open (undecided), accept, reject, conflict."""
    k = KINDS[kind]
    counts = {"open": 0, "accept": 0, "reject": 0, "conflict": 0}
    for state, n in cur.execute(
        f"SELECT coalesce(decision, 'open'), count(*) FROM {k.table} GROUP BY 1"
    ).fetchall():
        counts[str(state)] = int(n)
    return counts


def first_in_state(cur: Cursor, kind: str, state: str) -> str | None:
    """The first item of `kind` in queue order in a review state ('conflict': what a lead opens
    to settle)."""
    k = KINDS[kind]
    row = first_row(
        cur.execute(
            f"SELECT p.{k.id_column} FROM {k.table} p WHERE p.decision = ? "
            f"ORDER BY {k.order_sql} LIMIT 1",
            [state],
        )
    )
    return None if row is None else str(row[0])


def browse(
    cur: Cursor, filters: ItemFilters, after_id: str | None, *, now: datetime, kind: str
) -> str | None:
    """The first item of `kind` under `filters` after `after_id` in queue order, wrapping round to
    the start; nothing is leased. What a lead browsing a state that is nobody's to-do (conflicts,
    accepted items) steps through; `after_id` need not match the filters any more (the item just
    settled is out of the conflicts)."""
    k = kind_of(kind)
    where, params = k.where(filters, now=now, reviews=_reviews(kind, review_settings(cur)))
    order = k.order_sql
    # The order key as a row: drift's is two columns, the others' one (DuckDB compares rows).
    after = (
        f"coalesce(({order}) > (SELECT ({order}) FROM {k.table} p WHERE p.{k.id_column} = ?), "
        "FALSE) DESC, "
    )
    row = first_row(
        cur.execute(
            f"SELECT p.{k.id_column} FROM {k.table} p WHERE {where} ORDER BY {after}{order} "
            "LIMIT 1",
            [*params, after_id],
        )
    )
    return None if row is None else str(row[0])


def place(
    cur: Cursor, filters: ItemFilters, item_id: str, *, now: datetime, kind: str
) -> tuple[int | None, int]:
    """(the item's 1-based place among the items of `kind` under `filters` in queue order, or
    None when it is not among them; how many there are): "Conflict 2 of 3" on a card."""
    k = kind_of(kind)
    where, params = k.where(filters, now=now, reviews=_reviews(kind, review_settings(cur)))
    row = first_row(
        cur.execute(
            f"WITH m AS (SELECT p.{k.id_column} AS id, row_number() OVER (ORDER BY "
            f"{k.order_sql}) AS n FROM {k.table} p WHERE {where}) "
            "SELECT (SELECT n FROM m WHERE id = ?), (SELECT count(*) FROM m)",
            [*params, item_id],
        )
    )
    assert row is not None
    return (None if row[0] is None else int(row[0])), int(row[1])


# --- leases and the reviewer's queue ------------------------------------------------------------


def _reviews(kind: str, settings: ReviewSettings) -> int:
    return settings.reviews_per_item if KINDS[kind].shared_reviews else 1


def lease_next(
    cur: Cursor, filters: ItemFilters | None, reviewer: str, *, now: datetime, kind: str
) -> str | None:
    """The next item of `kind` `reviewer` should review under `filters` (the kind's own), leased
    to them; None when done. An item already leased to the reviewer comes first (a reload resumes
    it), then queue order. Without filters, a queue that is not `filtered` is read from the
    reviewer's to-do set (`store.to_do`: cheaper at 100k items).
    """
    k = kind_of(kind)
    settings = review_settings(cur)
    if filters is None and not k.filtered:
        item_id = to_do.next_to_do(cur, kind, reviewer, now, _reviews(kind, settings))
        if item_id is not None:
            take_lease(cur, item_id, reviewer, now=now, minutes=settings.lease_minutes, kind=kind)
        return item_id
    f = replace(k.check_filters(filters), decision=DecisionState.UNDECIDED, reviewer=reviewer)
    where, params = k.where(f, now=now, reviews=_reviews(kind, settings))
    # The reviewer's own leases as a plain IN list: a correlated EXISTS here made DuckDB join and
    # group every to-do row (59 ms against 39 ms at 100k episodes, bench_episode_card.py).
    row = first_row(
        cur.execute(
            f"SELECT p.{k.id_column} FROM {k.table} p WHERE {where} ORDER BY p.{k.id_column} IN "
            "(SELECT l.item_id FROM leases l WHERE l.kind = ? AND l.reviewer = ? "
            f"AND l.expires_at > ?) DESC, {k.order_sql} LIMIT 1",
            [*params, kind, reviewer, now],
        )
    )
    if row is None:
        return None
    item_id = str(row[0])
    take_lease(cur, item_id, reviewer, now=now, minutes=settings.lease_minutes, kind=kind)
    return item_id


def progress(cur: Cursor, reviewer: str, *, kind: str, now: datetime) -> tuple[int, int]:
    """(done, share): the items of `kind` the reviewer has voted on (skips too) and those plus
    the ones still to do for them."""
    # An item with a vote is never deleted (a QA item only while undecided; a drift item replaced
    # takes its votes with it): each vote is an item.
    row = first_row(
        cur.execute("SELECT count(*) FROM votes WHERE kind = ? AND reviewer = ?", [kind, reviewer])
    )
    assert row is not None
    done = int(row[0])
    reviews = _reviews(kind, review_settings(cur))
    return done, done + to_do.count_to_do(cur, kind, reviewer, now, reviews)


def take_lease(
    cur: Cursor,
    item_id: str,
    reviewer: str,
    *,
    now: datetime,
    minutes: float | None = None,
    kind: str,
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
            "SELECT expires_at FROM leases WHERE kind = ? AND item_id = ? AND reviewer = ?",
            [kind, item_id, reviewer],
        )
    )
    if held is not None and held[0] > now + timedelta(minutes=minutes / 2):
        return
    _bump(cur, kind, item_id)
    cur.execute("DELETE FROM leases WHERE reviewer = ? AND expires_at <= ?", [reviewer, now])
    cur.execute(
        "INSERT OR REPLACE INTO leases (item_id, reviewer, expires_at, kind) VALUES (?, ?, ?, ?)",
        [item_id, reviewer, now + timedelta(minutes=minutes), kind],
    )


def release_leases(cur: Cursor, reviewer: str, item_ids: Sequence[str] = (), *, kind: str) -> None:
    """Give back the reviewer's leases (all, or those on `item_ids` of `kind`)."""
    if item_ids:
        cur.execute(
            "DELETE FROM leases WHERE reviewer = ? AND kind = ? "
            "AND item_id IN (SELECT unnest(?::VARCHAR[]))",
            [reviewer, kind, list(item_ids)],
        )
    else:
        cur.execute("DELETE FROM leases WHERE reviewer = ?", [reviewer])
