"""The `Store`'s review-queue methods for every kind of item (`store.queue_kinds`): decide, undo,
lease, step back through what one has seen, progress. Proposals are the default kind, so the
proposals' callers name no kind; the Drafts, Drift and Episodes queues name theirs."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Final

from codesearch_core.access import Action
from codesearch_core.errors import StoreError
from codesearch_core.models import DecisionAction
from codesearch_core.store import bulk as store_bulk
from codesearch_core.store import decisions as store_decisions
from codesearch_core.store import episodes as store_episodes
from codesearch_core.store.audit import Deed
from codesearch_core.store.base import StoreBase
from codesearch_core.store.episodes import StoredEpisode
from codesearch_core.store.queue_kinds import PROPOSAL, kind_of
from codesearch_core.store.review_queries import item_history
from codesearch_core.store.rows import utc_now
from codesearch_core.store.types import DecisionEvent, QueueFilters

_MAX_TEXT: Final = 20_000


class QueueStore(StoreBase):
    """Decisions, undo, leases, seen items and progress, one code path for every kind."""

    def record_decision(
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
        kind: str = PROPOSAL,
    ) -> int:
        """Record `reviewer`'s decision on an item of `kind`; returns its event id.

        Each reviewer's decision is kept as theirs: it never replaces another reviewer's. The item
        is resolved once it has the reviews the store asks for (`review_settings`; drafts and drift
        take one) and they agree; reviewers who disagree put it in conflict until a lead's `final`
        decision. `undo` cancels the reviewer's own latest decision on the item. `seen`: the event
        id of the reviewer's vote when their card was drawn (None: none), to refuse a decision from
        an out-of-date tab (StaleDecisionError). `at` (naive UTC) is for imports of decisions made
        elsewhere.
        """
        try:
            act = DecisionAction(action)
        except ValueError:
            allowed = ", ".join(a.value for a in DecisionAction)
            raise StoreError(f"unknown decision {action!r}: use one of {allowed}") from None
        k = kind_of(kind)
        who = store_decisions.check_reviewer(reviewer)
        for label, text in (("note", note), ("reason", reason)):
            if len(text) > _MAX_TEXT:
                raise StoreError(
                    f"the {label} is too long ({len(text)} characters, at most {_MAX_TEXT})"
                )
        ts = at or utc_now()
        if act is DecisionAction.UNDO:
            return self.undo_last(who, item_id=item_id, at=ts, kind=kind)[1]

        def decide(deed: Deed) -> int:
            need = (
                Action.RESOLVE if final else k.accept if act is DecisionAction.ACCEPT else k.decide
            )
            deed.require_self(who, need)
            event = store_decisions.record_decision(
                deed.cur, item_id, act, who, note=note, reason=reason, ts=ts, seen=seen,
                final=final, kind=kind,
            )  # fmt: skip
            prefix = "decision" if kind == PROPOSAL else kind
            action = f"{prefix}.{'final.' if final else ''}{act}"
            deed.log(action, item_id, reviewer=who, event=event, note=note[:200], reason=reason)
            return event

        return self._act(decide, action=k.decide, what="record the decision")

    def undo_last(
        self,
        reviewer: str,
        *,
        item_id: str | None = None,
        at: datetime | None = None,
        kind: str = PROPOSAL,
    ) -> tuple[str, int]:
        """Cancel the reviewer's own latest decision on an item of `kind` (on `item_id`, if
        given); (item id, event id). Repeated undos walk back through the reviewer's history,
        across reloads and tabs; what the decision did (a draft's blueprint, a drift's resolution)
        is taken back with it. A decision of a lead's bulk action (`store.bulk`) takes the whole
        batch back: (the first item's id, the last undo's event id)."""
        ts = at or utc_now()
        who = store_decisions.check_reviewer(reviewer)
        k = kind_of(kind)

        def undo(deed: Deed) -> tuple[str, int]:
            deed.require_self(who, k.decide)
            target = store_decisions.last_undoable(deed.cur, who, item_id, kind=kind)
            batch = None if target is None else store_bulk.batch_of(deed.cur, target[1])
            if batch is not None:
                undone = store_bulk.undo_batch(deed.cur, who, batch, ts=ts, kind=kind)
                deed.log("decision.bulk.undo", batch, reviewer=who, items=len(undone))
                return undone[0][0], undone[-1][1]
            done = store_decisions.undo_last(deed.cur, who, ts=ts, item_id=item_id, kind=kind)
            prefix = "decision" if kind == PROPOSAL else kind
            deed.log(f"{prefix}.undo", done[0], reviewer=who, event=done[1])
            return done

        return self._act(undo, action=k.decide, what="undo the decision")

    def last_undoable(self, reviewer: str, *, kind: str = PROPOSAL) -> tuple[str, int, str] | None:
        """(item id, event id, action) of what `undo_last(reviewer)` would cancel, or None."""
        return self._read(lambda cur: store_decisions.last_undoable(cur, reviewer, kind=kind))

    def lease_next(
        self, filters: QueueFilters | None, reviewer: str, *, kind: str = PROPOSAL
    ) -> str | None:
        """The next item of `kind` `reviewer` should review (proposals: under `filters`), leased
        to them so that other reviewers are not shown it unless it needs more reviews; None when
        they are done."""
        now = utc_now()
        who = store_decisions.check_reviewer(reviewer)
        k = kind_of(kind)

        def lease(deed: Deed) -> str | None:
            deed.require_self(who, k.decide)
            return store_decisions.lease_next(deed.cur, filters, who, now=now, kind=kind)

        return self._act(lease, action=k.decide, what="pick the next item")

    def take_lease(self, item_id: str, reviewer: str, *, kind: str = PROPOSAL) -> None:
        """Lease (or renew) an item shown to a reviewer."""
        who = store_decisions.check_reviewer(reviewer)
        now = utc_now()
        k = kind_of(kind)

        def lease(deed: Deed) -> None:
            deed.require_self(who, k.decide)
            store_decisions.take_lease(deed.cur, item_id, who, now=now, kind=kind)

        self._act(lease, action=k.decide, what="lease the item")

    def release_leases(
        self, reviewer: str, item_ids: Sequence[str] = (), *, kind: str = PROPOSAL
    ) -> None:

        def release(deed: Deed) -> None:
            deed.require_self(reviewer.strip(), Action.REVIEW)
            store_decisions.release_leases(deed.cur, reviewer.strip(), item_ids, kind=kind)

        self._act(release, action=Action.REVIEW, what="release the leases")

    def seen_items(self, reviewer: str, *, kind: str = PROPOSAL) -> list[tuple[str, str | None]]:
        """The items of `kind` the reviewer decided, in the order they first did, each with their
        vote now (None: undone): what the card's Previous and Next step through."""
        kind_of(kind)
        return self._read(lambda cur: store_decisions.seen_items(cur, reviewer.strip(), kind=kind))

    def queue_progress(self, reviewer: str, *, kind: str = PROPOSAL) -> tuple[int, int]:
        """(done, share) of `reviewer` in the queue of `kind`: the items they decided (skips too),
        and those plus the items still to do for them."""
        kind_of(kind)
        now = utc_now()
        return self._read(
            lambda cur: store_decisions.progress(cur, reviewer.strip(), kind=kind, now=now)
        )

    def first_in_state(self, state: str, *, kind: str = PROPOSAL) -> str | None:
        """The first item of `kind` in queue order in a review state ('conflict': what a lead's
        button opens to settle)."""
        kind_of(kind)
        return self._read(lambda cur: store_decisions.first_in_state(cur, kind, state))

    def accept_blocker(self, item_id: str, *, kind: str = PROPOSAL) -> str | None:
        """Why an item of `kind` cannot be accepted now (what `record_decision` would refuse with),
        or None: a card says it next to its greyed Accept before anyone presses it."""
        blocker = kind_of(kind).accept_blocker
        if blocker is None:
            return None
        return self._read(lambda cur: blocker(cur, item_id))

    def queue_history(self, item_id: str, *, kind: str = PROPOSAL) -> tuple[DecisionEvent, ...]:
        """Every decision event on an item of `kind`, oldest first (`undone` marks cancelled)."""
        return self._read(lambda cur: item_history(cur, item_id, kind))

    # --- episodes ----------------------------------------------------------------------------------

    def get_episode(self, episode_id: str) -> StoredEpisode | None:
        return self._read(lambda cur: store_episodes.get_episode(cur, episode_id))

    def accepted_episodes(self) -> list[StoredEpisode]:
        """Episodes whose review resolved them accepted, whose corpus is present and that are not
        in open drift, in the order they were stored: what may leave the studio."""
        return self._read(store_episodes.accepted_episodes)
