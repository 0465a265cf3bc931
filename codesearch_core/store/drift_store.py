"""The `Store`'s pinning and drift methods (`store.pinning`: the queries), kept apart from
`store.core` so that neither file grows past what one concern needs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from codesearch_core.access import Action
from codesearch_core.errors import StoreError
from codesearch_core.models import Blueprint
from codesearch_core.store import pinning
from codesearch_core.store.audit import Deed
from codesearch_core.store.pinning import DriftItem, StaleRun
from codesearch_core.store.queue_kinds import DRIFT, drift_action
from codesearch_core.store.queue_store import QueueStore


class DriftStore(QueueStore):
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
        StoreError when another tab decided it first. A drift decision is the queue model's
        (kind "drift": A is the first answer, X the second), so it can be skipped and undone.
        """
        item = self.get_drift(item_id)
        if item is None or item.resolution is not None:
            by = f" by {item.resolved_by}" if item and item.resolved_by else ""
            raise StoreError(f"{item_id!r} is not in open drift (decided already{by}?)")
        action = drift_action(item.kind, resolution)
        self.record_decision(item_id, action, reviewer, note, kind=DRIFT)
