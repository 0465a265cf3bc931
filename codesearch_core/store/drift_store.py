"""The `Store`'s pinning and drift methods (`store.pinning`: the queries), kept apart from
`store.core` so that neither file grows past what one concern needs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from codesearch_core.access import Action
from codesearch_core.models import Blueprint, DecisionAction
from codesearch_core.store import decisions as store_decisions
from codesearch_core.store import pinning
from codesearch_core.store import queries as store_queries
from codesearch_core.store import writes as store_writes
from codesearch_core.store.audit import Deed
from codesearch_core.store.base import StoreBase
from codesearch_core.store.pinning import DriftItem, StaleRun


class DriftStore(StoreBase):
    """What was made on another snapshot or by other tools, and the Drift queue."""

    def stale_references(
        self, snapshots: Mapping[str, str | None], versions: str
    ) -> list[Blueprint]:
        """Blueprints whose spans were checked on another snapshot or by other tool versions."""
        return self._read(lambda cur: pinning.stale_references(cur, snapshots, versions))

    def stale_accepted(self, snapshots: Mapping[str, str | None], versions: str) -> list[StaleRun]:
        """Accepted proposals whose run was made on another snapshot or by other tool versions."""
        return self._read(lambda cur: pinning.stale_accepted(cur, snapshots, versions))

    def mark_references_current(
        self, blueprint_ids: Sequence[str], snapshot_of: Mapping[str, str | None], versions: str
    ) -> None:
        """These references still find their expected spans now: record the snapshot and tools
        (`snapshot_of` maps each blueprint id to its corpus's snapshot)."""

        def mark(deed: Deed) -> None:
            for bp_id in blueprint_ids:
                pinning.mark_reference_current(deed.cur, bp_id, snapshot_of[bp_id], versions)
            if blueprint_ids:
                deed.log("pinning.current", "", blueprints=len(blueprint_ids))

        self._act(mark, action=Action.PROPOSE, what="record the re-checked references")

    def add_drift(self, items: Sequence[DriftItem]) -> None:
        """Put items whose findings changed in the Drift queue (one transaction)."""

        def add(deed: Deed) -> None:
            for item in items:
                pinning.add_drift(deed.cur, item)
            if items:
                deed.log("drift.add", "", items=len(items))

        self._act(add, action=Action.PROPOSE, what="record the drift")

    def open_drift(self) -> list[DriftItem]:
        return self._read(pinning.open_drift)

    def get_drift(self, item_id: str) -> DriftItem | None:
        return self._read(lambda cur: pinning.get_drift(cur, item_id))

    def drift_held_out(self) -> int:
        """Accepted proposals held out of exports while in open drift."""
        return self._read(pinning.drift_held_out)

    def resolve_drift(self, item_id: str, resolution: str, reviewer: str, note: str = "") -> None:
        """Decide an item in drift, as a lead (it re-decides accepted data):

        - a proposal: "kept" (still right on the new findings; exported again) or "rejected" (a
          final reject decision);
        - a reference: "updated" (the new findings become the expected spans, graded again) or
          "kept" (the expected spans stay; the blueprint is marked checked on this snapshot).
        StoreError when another tab decided it first.
        """
        who = store_decisions.check_reviewer(reviewer)

        def resolve(deed: Deed) -> None:
            deed.require_self(who, Action.RESOLVE)
            item = pinning.resolve_drift(deed.cur, item_id, resolution, who, deed.at)
            if item.kind == "proposal" and resolution == "rejected":
                store_decisions.record_decision(
                    deed.cur, item_id, DecisionAction.REJECT, who, note=note,
                    reason="drift: the findings changed", ts=deed.at, final=True,
                )  # fmt: skip
            elif item.kind == "reference":
                bp = store_queries.get_blueprint(deed.cur, item.blueprint_id)
                if bp is not None and resolution == "updated":
                    deed.require(Action.EDIT_BLUEPRINTS)
                    store_writes.upsert_blueprint(
                        deed.cur,
                        replace(bp, expected=item.new_findings, snapshot=item.new_snapshot),
                        source="drift",
                    )
                if bp is not None:
                    pinning.mark_reference_current(
                        deed.cur, bp.id, item.new_snapshot, item.new_tools or "{}"
                    )
            deed.log(f"drift.{resolution}", item_id, kind=item.kind, note=note[:200])

        self._act(resolve, action=Action.RESOLVE, what="decide the drift")
