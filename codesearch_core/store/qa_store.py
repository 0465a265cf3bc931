"""The `Store`'s QA-queue methods (`store.qa`: a data set's QA sample as a review queue), kept apart
from `store.core` so that neither file grows past what one concern needs. Deciding, undo, leases
and progress are the queue model's (`QueueStore`, kind "qa")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from codesearch_core.access import Action
from codesearch_core.store import decisions as store_decisions
from codesearch_core.store import qa
from codesearch_core.store.audit import Deed
from codesearch_core.store.qa import QADataset, QAImport, QAItem
from codesearch_core.store.queue_kinds import QA
from codesearch_core.store.queue_store import QueueStore


class QAStore(QueueStore):
    """A data set's QA sample in the review queue: import it, read its items and verdicts."""

    def import_qa_sample(
        self, dataset: QADataset, items: Sequence[tuple[str, Mapping[str, Any]]]
    ) -> QAImport:
        """Queue a data set's QA sample, (stratum, item) pairs, in one transaction: sampling the
        same data set again replaces its open, undecided items and keeps the decided ones."""

        def put(deed: Deed) -> QAImport:
            done = qa.import_sample(deed.cur, dataset, items, at=deed.at)
            deed.log("qa.sample", dataset.dataset_id, name=dataset.name, folder=dataset.folder,
                     added=done.added, removed=done.removed, kept=done.kept)  # fmt: skip
            return done

        return self._act(put, action=Action.PROPOSE, what="queue the QA sample")

    def get_qa_item(self, qa_id: str) -> QAItem | None:
        return self._read(lambda cur: qa.get_item(cur, qa_id))

    def qa_items(self, dataset_id: str) -> list[QAItem]:
        """The queued QA items of a data set (its id: `dataset.sample.dataset_of`), oldest first."""
        return self._read(lambda cur: qa.dataset_items(cur, dataset_id))

    def qa_counts(self) -> dict[str, int]:
        """QA items by review state: open, accept, reject, conflict (the QA queue's line)."""
        return self._read(lambda cur: store_decisions.state_counts(cur, QA))
