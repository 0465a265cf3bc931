"""One review queue as a handle: `store.queue(kind)` (issue 38).

A `Queue` is made from its kind's `QueueKind` (`store.queue_kinds`) and owns everything a review
queue does, the same for every kind: decide (a vote, or a lead's final decision), undo, leases,
what a reviewer has seen, their progress, the counts by state, the Overview's figures, an item's
history, a lead's bulk action, and what blocks an accept. Where the kinds differ, the `QueueKind`
says so; a new kind is a new entry there and gets all of this, never a method of its own on the
`Store`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Final

import duckdb

from codesearch_core.access import Action
from codesearch_core.errors import StoreError
from codesearch_core.models import DecisionAction
from codesearch_core.store import bulk as store_bulk
from codesearch_core.store import dashboard as store_dashboard
from codesearch_core.store import decisions as store_decisions
from codesearch_core.store.audit import Deed
from codesearch_core.store.base import StoreBase
from codesearch_core.store.bulk import BulkPlan
from codesearch_core.store.filters import ItemFilters
from codesearch_core.store.queue_kinds import QueueKind
from codesearch_core.store.review_queries import item_history
from codesearch_core.store.rows import utc_now
from codesearch_core.store.types import DecisionEvent, QueueStats

_MAX_TEXT: Final = 20_000


class Queue:
    """The review queue of one kind of item on a store, acting as the store's actor."""

    __slots__ = ("_store", "kind")

    def __init__(self, store: StoreBase, kind: QueueKind) -> None:
        self._store = store
        self.kind = kind

    @property
    def name(self) -> str:
        return self.kind.name

    def decide(
        self,
        item_id: str,
        action: DecisionAction | str,
        reviewer: str,
        note: str = "",
        reason: str = "",
        *,
        at: datetime | None = None,
        seen: int | None = store_decisions.UNCHECKED,
        final: bool = False,
        version: int | None = None,
    ) -> int:
        """Record `reviewer`'s decision on an item; returns its event id.

        Each reviewer's decision is kept as theirs: it never replaces another reviewer's. The item
        is settled once it has the reviews the kind asks for (`review_settings`, or one) and they
        agree; reviewers who disagree put it in conflict until a lead's `final` decision. What a
        settled item does (a draft's blueprint, a drift's resolution) is the kind's `settle`.
        `seen`: the event id of the reviewer's vote when their card was drawn (None: none), to
        refuse a decision from an out-of-date tab (StaleDecisionError); `version`: the item's
        version the card showed (StaleDecisionError when it was changed since). `at` (naive UTC)
        is for imports of decisions made elsewhere. An undo is `undo`'s.
        """
        try:
            act = DecisionAction(action)
        except ValueError:
            allowed = ", ".join(a.value for a in DecisionAction)
            raise StoreError(f"unknown decision {action!r}: use one of {allowed}") from None
        k = self.kind
        who = store_decisions.check_reviewer(reviewer)
        for label, text in (("note", note), ("reason", reason)):
            if len(text) > _MAX_TEXT:
                raise StoreError(
                    f"the {label} is too long ({len(text)} characters, at most {_MAX_TEXT})"
                )
        ts = at or utc_now()
        if act is DecisionAction.UNDO:
            return self.undo(who, item_id=item_id, at=ts)[1]

        def decide(deed: Deed) -> int:
            need = (
                Action.RESOLVE if final else k.accept if act is DecisionAction.ACCEPT else k.decide
            )
            deed.require_self(who, need)
            event = store_decisions.record_decision(
                deed.cur, item_id, act, who, note=note, reason=reason, ts=ts, seen=seen,
                final=final, kind=k.name, version=version,
            )  # fmt: skip
            action = f"{k.audit_prefix}.{'final.' if final else ''}{act}"
            deed.log(action, item_id, reviewer=who, event=event, note=note[:200], reason=reason)
            return event

        return self._store._act(decide, action=k.decide, what="record the decision")

    def undo(
        self, reviewer: str, *, item_id: str | None = None, at: datetime | None = None
    ) -> tuple[str, int]:
        """Cancel the reviewer's own latest decision in this queue (on `item_id`, if given);
        (item id, event id). Repeated undos walk back through the reviewer's history, across
        reloads and tabs; what the decision did (a draft's blueprint, a drift's resolution) is
        taken back with it. A decision of a lead's bulk action takes the whole batch back: (the
        first item's id, the last undo's event id)."""
        ts = at or utc_now()
        who = store_decisions.check_reviewer(reviewer)
        k = self.kind

        def undo(deed: Deed) -> tuple[str, int]:
            deed.require_self(who, k.decide)
            target = store_decisions.last_undoable(deed.cur, who, item_id, kind=k.name)
            batch = None if target is None else store_bulk.batch_of(deed.cur, target[1])
            if batch is not None:
                undone = store_bulk.undo_batch(deed.cur, who, batch, ts=ts, kind=k.name)
                deed.log(f"{k.audit_prefix}.bulk.undo", batch, reviewer=who, items=len(undone))
                return undone[0][0], undone[-1][1]
            done = store_decisions.undo_last(deed.cur, who, ts=ts, item_id=item_id, kind=k.name)
            deed.log(f"{k.audit_prefix}.undo", done[0], reviewer=who, event=done[1])
            return done

        return self._store._act(undo, action=k.decide, what="undo the decision")

    def last_undoable(self, reviewer: str) -> tuple[str, int, str] | None:
        """(item id, event id, action) of what `undo(reviewer)` would cancel, or None."""
        return self._store._read(
            lambda cur: store_decisions.last_undoable(cur, reviewer, kind=self.kind.name)
        )

    def last_undoable_batch(self, reviewer: str) -> tuple[str, int] | None:
        """(batch id, items) when the reviewer's next undo takes back a bulk action, else None."""

        def read(cur: duckdb.DuckDBPyConnection) -> tuple[str, int] | None:
            target = store_decisions.last_undoable(cur, reviewer, kind=self.kind.name)
            batch = None if target is None else store_bulk.batch_of(cur, target[1])
            return None if batch is None else (batch, store_bulk.batch_size(cur, batch))

        return self._store._read(read)

    def lease_next(self, filters: ItemFilters | None, reviewer: str) -> str | None:
        """The next item `reviewer` should review under `filters` (the kind's own; None: none),
        leased to them so that other reviewers are not shown it unless it needs more reviews;
        None when they are done."""
        now = utc_now()
        who = store_decisions.check_reviewer(reviewer)
        k = self.kind

        def lease(deed: Deed) -> str | None:
            deed.require_self(who, k.decide)
            return store_decisions.lease_next(deed.cur, filters, who, now=now, kind=k.name)

        return self._store._act(lease, action=k.decide, what="pick the next item")

    def take_lease(self, item_id: str, reviewer: str) -> None:
        """Lease (or renew) an item shown to a reviewer."""
        who = store_decisions.check_reviewer(reviewer)
        now = utc_now()
        k = self.kind

        def lease(deed: Deed) -> None:
            deed.require_self(who, k.decide)
            store_decisions.take_lease(deed.cur, item_id, who, now=now, kind=k.name)

        self._store._act(lease, action=k.decide, what="lease the item")

    def release_leases(self, reviewer: str, item_ids: Sequence[str] = ()) -> None:
        """Give back the reviewer's leases on `item_ids` (all their leases, of every kind, when
        none are named: they are leaving)."""
        who = reviewer.strip()

        def release(deed: Deed) -> None:
            deed.require_self(who, Action.REVIEW)
            store_decisions.release_leases(deed.cur, who, item_ids, kind=self.kind.name)

        self._store._act(release, action=Action.REVIEW, what="release the leases")

    def seen(self, reviewer: str) -> list[tuple[str, str | None]]:
        """The items the reviewer decided, in the order they first did, each with their vote now
        (None: undone): what the card's Previous and Next step through."""
        return self._store._read(
            lambda cur: store_decisions.seen_items(cur, reviewer.strip(), kind=self.kind.name)
        )

    def progress(self, reviewer: str) -> tuple[int, int]:
        """(done, share) of `reviewer`: the items they decided (skips too), and those plus the
        items still to do for them."""
        now = utc_now()
        return self._store._read(
            lambda cur: store_decisions.progress(
                cur, reviewer.strip(), kind=self.kind.name, now=now
            )
        )

    def counts(self) -> dict[str, int]:
        """Items by review state: open, accept, reject, conflict (the queue's line)."""
        return self._store._read(lambda cur: store_decisions.state_counts(cur, self.kind.name))

    def stats(self) -> QueueStats:
        """The Overview's figures of this queue, read in one snapshot: its items by state (and by
        the kind's groups), its decision events per day, its agreement, each reviewer's votes."""
        return self._store._read(lambda cur: store_dashboard.queue_stats(cur, self.kind))

    def first_in_state(self, state: str) -> str | None:
        """The first item in queue order in a review state ('conflict': what a lead's button
        opens to settle)."""
        return self._store._read(
            lambda cur: store_decisions.first_in_state(cur, self.kind.name, state)
        )

    def browse(self, filters: ItemFilters | None, after_id: str | None = None) -> str | None:
        """The first item under `filters` (the kind's own) after `after_id` in queue order,
        wrapping round; nothing leased: a lead stepping through conflicts or decided items."""
        f = self.kind.check_filters(filters)
        now = utc_now()
        return self._store._read(
            lambda cur: store_decisions.browse(cur, f, after_id, now=now, kind=self.kind.name)
        )

    def place(self, filters: ItemFilters | None, item_id: str) -> tuple[int | None, int]:
        """(the item's place among the items under `filters`, or None; how many there are)."""
        f = self.kind.check_filters(filters)
        now = utc_now()
        return self._store._read(
            lambda cur: store_decisions.place(cur, f, item_id, now=now, kind=self.kind.name)
        )

    def accept_blocker(self, item_id: str) -> str | None:
        """Why an item cannot be accepted now (what `decide` would refuse with), or None: a card
        says it next to its greyed Accept before anyone presses it."""
        blocker = self.kind.accept_blocker
        if blocker is None:
            return None
        return self._store._read(lambda cur: blocker(cur, item_id))

    def history(self, item_id: str) -> tuple[DecisionEvent, ...]:
        """Every decision event on an item, oldest first (`undone` marks cancelled ones)."""
        return self._store._read(lambda cur: item_history(cur, item_id, self.kind.name))

    # --- a lead's bulk action ------------------------------------------------------------------

    def bulk_plan(self, filters: ItemFilters | None, action: DecisionAction) -> BulkPlan:
        """What a bulk accept or reject over `filters` (the kind's own type, `kind.filters`;
        None: every open item) would decide and what it leaves out, and why: the count a lead
        confirms before `bulk_decide`."""
        now = utc_now()
        return self._store._read(
            lambda cur: store_bulk.plan(cur, self.kind, filters, action, now=now)
        )

    def bulk_decide(
        self,
        filters: ItemFilters | None,
        action: DecisionAction,
        reviewer: str,
        *,
        expected: BulkPlan,
        reason: str = "",
        note: str = "",
        at: datetime | None = None,
    ) -> tuple[str, BulkPlan]:
        """A lead's final decision on every item of `expected` (a `bulk_plan` they confirmed), as
        one audited batch: (batch id, the plan done). StaleDecisionError and nothing written when
        the filter selects other items now. `undo` takes the whole batch back."""
        who = store_decisions.check_reviewer(reviewer)
        ts = at or utc_now()
        k = self.kind

        def decide(deed: Deed) -> tuple[str, BulkPlan]:
            deed.require_self(who, Action.RESOLVE)
            batch, done = store_bulk.apply(
                deed.cur, k, filters, action, who, expected=expected.item_ids, reason=reason,
                note=note, ts=ts,
            )  # fmt: skip
            deed.log(
                f"{k.audit_prefix}.bulk.{action.value}", batch, reviewer=who,
                items=len(done.item_ids), left_out=dict(done.left_out),
                filters=k.check_filters(filters).to_dict(), reason=reason, note=note[:200],
            )  # fmt: skip
            return batch, done

        return self._store._act(decide, action=Action.RESOLVE, what="record the bulk decision")
