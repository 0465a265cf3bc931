"""The `Store`'s guidelines and bulk-action methods (`store.guidelines`, `store.bulk`), kept apart
from `store.core` so that neither file grows past what one concern needs."""

from __future__ import annotations

from datetime import datetime

import duckdb

from codesearch_core.access import Action
from codesearch_core.models import DecisionAction
from codesearch_core.store import bulk
from codesearch_core.store import decisions as store_decisions
from codesearch_core.store import guidelines as store_guidelines
from codesearch_core.store.audit import Deed
from codesearch_core.store.base import StoreBase
from codesearch_core.store.bulk import BulkPlan
from codesearch_core.store.guidelines import Guidelines
from codesearch_core.store.rows import utc_now
from codesearch_core.store.types import QueueFilters


class ReviewToolsStore(StoreBase):
    """What reviewers expect from the tools they already use: guidelines on the card, and a lead's
    bulk actions over a filter."""

    # --- guidelines ------------------------------------------------------------------------------

    def guidelines(self, version: int | None = None) -> Guidelines | None:
        """The guidelines in force (or the saved `version`); None when there are none."""
        if version is None:
            return self._read(store_guidelines.current)
        return self._read(lambda cur: store_guidelines.get(cur, version))

    def guideline_versions(self) -> list[Guidelines]:
        """Every saved version, newest first."""
        return self._read(store_guidelines.versions)

    def save_guidelines(self, text: str) -> Guidelines | None:
        """Save `text` (Markdown) as a new version of the guidelines, by the store's actor (a
        lead); None when it is the text in force already (nothing is written). Decisions recorded
        from now on keep the new version."""
        at = utc_now()

        def save(deed: Deed) -> Guidelines | None:
            saved = store_guidelines.save(deed.cur, text, deed.actor.name, at=at)
            if saved is not None:
                deed.log("guidelines.save", f"v{saved.version}", chars=len(saved.text))
            return saved

        return self._act(save, action=Action.EDIT_GUIDELINES, what="save the guidelines")

    # --- bulk actions ----------------------------------------------------------------------------

    def bulk_plan(self, filters: QueueFilters, action: DecisionAction) -> BulkPlan:
        """What a bulk accept or reject over `filters` would decide and what it leaves out, and
        why: the count a lead confirms before `bulk_decide`."""
        now = utc_now()
        return self._read(lambda cur: bulk.plan(cur, filters, action, now=now))

    def bulk_decide(
        self,
        filters: QueueFilters,
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
        the filter selects other items now. `undo_last` takes the whole batch back."""
        who = store_decisions.check_reviewer(reviewer)
        ts = at or utc_now()

        def decide(deed: Deed) -> tuple[str, BulkPlan]:
            deed.require_self(who, Action.RESOLVE)
            batch, done = bulk.apply(
                deed.cur, filters, action, who, expected=expected.item_ids, reason=reason,
                note=note, ts=ts,
            )  # fmt: skip
            deed.log(
                f"decision.bulk.{action.value}", batch, reviewer=who, items=len(done.item_ids),
                left_out=dict(done.left_out), filters=filters.to_dict(), reason=reason,
                note=note[:200],
            )  # fmt: skip
            return batch, done

        return self._act(decide, action=Action.RESOLVE, what="record the bulk decision")

    def last_undoable_batch(self, reviewer: str) -> tuple[str, int] | None:
        """(batch id, items) when the reviewer's next undo takes back a bulk action, else None."""

        def read(cur: duckdb.DuckDBPyConnection) -> tuple[str, int] | None:
            target = store_decisions.last_undoable(cur, reviewer)
            batch = None if target is None else bulk.batch_of(cur, target[1])
            return None if batch is None else (batch, bulk.batch_size(cur, batch))

        return self._read(read)
