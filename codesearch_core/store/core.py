"""The curation store: one DuckDB file holding blueprints, proposals, runs, grades and decisions.

One `Store` per process (the app caches it); many Streamlit sessions and threads share it (the
connection and transactions: `store.base`). Every change is one transaction by the store's `actor`
(`acting_as`), refused unless their role allows it and recorded in the audit trail with it.
DuckDB lets only one process open a file at a time, so a store idle for `IDLE_RELEASE_S` lets go of
it (a `codesearch db` command can then run beside the studio) and opens it again on the next call;
a process that finds the file held waits up to CODESEARCH_LOCK_WAIT seconds, then gets a
StoreError that names the holder.

Tables and the decision log's rules: `store.schema`; opening a file: `store.connect`; writes:
`store.writes`; reads: `store.queries`, `store.dashboard`, `store.export_rows`; people and the
audit trail: `store.audit`. Importing JSONL files is a layer above the store
(`codesearch_core.ingest`), and so is exporting (`codesearch_core.export`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

import duckdb

from codesearch_core.access import Action
from codesearch_core.errors import StoreError
from codesearch_core.models import Grade, Proposal, Reward, RunResult
from codesearch_core.store import dashboard as store_dashboard
from codesearch_core.store import decisions as store_decisions
from codesearch_core.store import export_rows as store_export_query
from codesearch_core.store import queries as store_queries
from codesearch_core.store import review_queries as store_review
from codesearch_core.store import writes as store_writes
from codesearch_core.store.audit import Deed
from codesearch_core.store.base import StoreBase, raise_if_interrupted
from codesearch_core.store.check import StoreCheck, check_store
from codesearch_core.store.filters import QueueFilters
from codesearch_core.store.parts import (
    Blueprints,
    Drafts,
    Drift,
    Episodes,
    Evals,
    GuidelineVersions,
    QASamples,
)
from codesearch_core.store.queue import Queue
from codesearch_core.store.queue_kinds import kind_of
from codesearch_core.store.step_labels import Steps
from codesearch_core.store.types import (
    DashboardStats,
    DecisionEvent,
    ExportRow,
    ImportReport,
    PendingExecution,
    QueueItem,
    QueuePage,
    ReviewItem,
    ReviewSettings,
    StoreCounts,
    StoredProposal,
)

_MAX_TEXT: Final = 20_000


#: The schema version from which grades are by coverage (`schema.GRADING_RULE`).
COVERAGE_GRADES_SINCE: Final = 7


class _RolledBack(Exception):
    """Ends a dry run's transaction: everything it wrote is rolled back."""


class Store(StoreBase):
    """A handle on one store file. Thread-safe; close it (or use `with`) when done.

    Every review queue is `queue(kind)`; the data beside the queues are small handles
    (`blueprints`, `drafts`, `drift`, `episodes`, `evals`, `qa`, `guidelines`: `store.parts`).
    The proposals' own tables (proposals, runs, grades), the review card's reads, the overview
    and the exports' reads are the store's methods.
    """

    def queue(self, kind: str) -> Queue:
        """The review queue of `kind` (`store.queue_kinds`: proposal, draft, drift, episode, qa);
        StoreError for another name."""
        return Queue(self, kind_of(kind))

    # Made on access, so that a store `acting_as` someone hands out handles acting as them.
    @property
    def blueprints(self) -> Blueprints:
        return Blueprints(self)

    @property
    def drafts(self) -> Drafts:
        return Drafts(self)

    @property
    def drift(self) -> Drift:
        return Drift(self)

    @property
    def episodes(self) -> Episodes:
        return Episodes(self)

    @property
    def evals(self) -> Evals:
        return Evals(self)

    @property
    def qa(self) -> QASamples:
        return QASamples(self)

    @property
    def guidelines(self) -> GuidelineVersions:
        return GuidelineVersions(self)

    @property
    def steps(self) -> Steps:
        """Labels of single calls of episodes, and corrected episodes (`store.step_labels`)."""
        return Steps(self)

    def _after_open(self) -> None:
        if 0 < self.found_version < COVERAGE_GRADES_SINCE:
            # Grades made by the older rule are re-derived from the stored runs once, on upgrade,
            # so the queue, the dashboard and the exports keep current grades.
            self.regrade_stale()

    def regrade_stale(self) -> int:
        """Grade again every stored run whose grade is not against the current grading key (the
        rule, the corpus and the expected spans); returns how many. Needs no new run."""
        return self._write(store_writes.regrade_stale, what="regrade")

    # --- proposals, runs, grades -----------------------------------------------------------------

    def add_proposals(self, proposals: Sequence[Proposal]) -> list[str]:
        """Store proposals; returns their ids in input order. A call already proposed for the same
        blueprint is stored once (its id is returned again and the sighting recorded)."""
        return list(self.add_proposals_report(proposals, source="api").ids)

    def add_proposals_report(self, proposals: Sequence[Proposal], *, source: str) -> ImportReport:
        """`add_proposals`, reporting how many were new."""

        def add(deed: Deed) -> ImportReport:
            report = store_writes.add_proposals(deed.cur, proposals, source=source)
            if report.new:
                deed.log("proposals.add", source, new=report.new, existing=report.existing)
            return report

        return self._act(add, action=Action.PROPOSE, what="add proposals")

    def get_proposal(self, proposal_id: str) -> StoredProposal | None:
        return self._read(lambda cur: store_queries.get_proposal(cur, proposal_id))

    def proposals_for_blueprint(self, blueprint_id: str) -> tuple[StoredProposal, ...]:
        return self._read(lambda cur: store_queries.proposals_for_blueprint(cur, blueprint_id))

    def pending_verification(
        self, limit: int = 256, *, include_invalid: bool = False
    ) -> list[PendingExecution]:
        """Proposals never executed, oldest first: valid ones, and invalid ones if asked (their
        `call_json` is None; recording them stores why they cannot run)."""
        return self._read(
            lambda cur: store_queries.pending_verification(
                cur, limit, include_invalid=include_invalid
            )
        )

    def record_execution_and_grade(
        self, proposal_id: str, run: RunResult, grade: Grade | None, reward: Reward
    ) -> None:
        """Store a run, its grade (None when nothing could be graded) and reward, in one transaction.
        Recording again (a re-run) replaces the previous run and grade."""
        self.record_executions_and_grades([(proposal_id, run, grade, reward)])

    def record_executions_and_grades(
        self,
        batch: Sequence[tuple[str, RunResult, Grade | None, Reward]],
        *,
        graded_against: Mapping[str, str] | None = None,
        snapshots: Mapping[str, str | None] | None = None,
    ) -> list[str]:
        """`record_execution_and_grade` for many proposals in one transaction: all or nothing.

        A transaction costs tens of milliseconds to commit whatever it holds, so verification
        writes its outcomes in batches. An unknown proposal id is a StoreError and nothing is
        written; a proposal named twice keeps its last record. `graded_against` (proposal id ->
        the `PendingExecution.grading_key` it was graded with): outcomes whose blueprint was edited
        since are not written; their ids are returned (they stay pending). `snapshots` (corpus ->
        snapshot id) is what the runs ran on, when the caller took it before running them;
        corpora it does not name are read now.
        """
        if not batch:
            return []

        def record(deed: Deed) -> list[str]:
            stale = store_writes.record_executions(deed.cur, batch, graded_against, snapshots)
            deed.log("runs.record", "", runs=len(batch) - len(stale), stale=len(stale))
            return stale

        return self._act(record, action=Action.PROPOSE, what="record the executions")

    # --- decisions -------------------------------------------------------------------------------

    def review_settings(self) -> ReviewSettings:
        return self._read(store_queries.review_settings)

    def set_review_settings(self, settings: ReviewSettings) -> dict[str, int]:
        """Change how many reviews an item needs (every item's state follows) and the lease time;
        per kind, how many items that opened again (positive: they need more reviews now) or
        settled (negative). Kinds it changed nothing in are left out."""

        def change(deed: Deed) -> dict[str, int]:
            old = store_queries.review_settings(deed.cur)
            opened = store_decisions.set_settings(deed.cur, settings)
            deed.log(
                "settings.change",
                "review",
                old=[old.reviews_per_item, old.lease_minutes],
                new=[settings.reviews_per_item, settings.lease_minutes],
                opened=opened,
            )
            return opened

        return self._act(change, action=Action.SETTINGS, what="change the settings")

    def preview_review_settings(self, settings: ReviewSettings) -> dict[str, int]:
        """What `set_review_settings(settings)` would open or settle, per kind, changing nothing:
        the same change in a transaction that is rolled back, so the count is the save's own
        (issue 39: a change reopened settled items before anyone was told)."""
        preview: dict[str, int] = {}

        def dry_run(cur: duckdb.DuckDBPyConnection) -> None:
            preview.update(store_decisions.set_settings(cur, settings))
            raise _RolledBack

        with contextlib.suppress(_RolledBack):
            self._write(dry_run, what="preview the settings")
        return preview

    def current_decision(self, proposal_id: str) -> DecisionEvent | None:
        """The event that settled the item (a lead's final decision or the last of the agreeing
        votes), or None while it is open or in conflict."""
        item = self.review_item(proposal_id)
        return None if item is None else item.decision

    def check_caches(self) -> list[str]:
        """Proposal ids whose cached votes, state or grade disagree with their sources (empty when
        all agree; see store.schema)."""
        return self._read(store_review.cache_mismatches)

    # --- review ----------------------------------------------------------------------------------

    def review_item(self, proposal_id: str) -> ReviewItem | None:
        return self._read(lambda cur: store_review.review_item(cur, proposal_id))

    def review_queue(
        self, filters: QueueFilters | None = None, *, offset: int = 0, limit: int = 50
    ) -> QueuePage:
        """One page of the queue in arrival order, and how many items match in all."""
        return self._read(
            lambda cur: store_review.review_queue(
                cur, filters or QueueFilters(), offset=offset, limit=limit
            )
        )

    def next_review_item(
        self, filters: QueueFilters | None = None, after_id: str | None = None
    ) -> QueueItem | None:
        """The first matching item after `after_id` in arrival order (from the start when None)."""
        return self._read(
            lambda cur: store_review.next_review_item(cur, filters or QueueFilters(), after_id)
        )

    def queue_position(
        self, filters: QueueFilters | None, proposal_id: str
    ) -> tuple[int | None, int]:
        """(1-based position of the item in the filtered queue or None if it is not in it, total)."""
        return self._read(
            lambda cur: store_review.queue_position(cur, filters or QueueFilters(), proposal_id)
        )

    # --- overview --------------------------------------------------------------------------------

    def counts(self) -> StoreCounts:
        return self._read(store_dashboard.counts)

    def check(self) -> StoreCheck:
        """Read every row of every table back (DuckDB verifies each data block's checksum)."""
        return self._read(check_store)

    def dashboard_stats(self) -> DashboardStats:
        return self._read(store_dashboard.dashboard_stats)

    def fingerprint(self) -> dict[str, Any]:
        """What identifies the store's content cheaply (for export manifests)."""
        return self._read(lambda cur: store_dashboard.fingerprint(cur, self.path))

    def export_rows(
        self,
        filters: QueueFilters,
        *,
        kind: str,
        include_reference: bool = False,
        with_meta: bool = True,
    ) -> Iterator[ExportRow]:
        """Rows for `export` in its deterministic order, streamed in batches from one snapshot.
        `kind`: "accepted" or "pairs" (accepted and rejected, grouped by blueprint)."""
        cur = self._cursor()
        try:
            yield from store_export_query.export_rows(
                cur, filters, kind=kind, include_reference=include_reference, with_meta=with_meta
            )
        except (duckdb.Error, RuntimeError) as err:
            raise_if_interrupted(err)
            if not isinstance(err, duckdb.Error):
                raise
            raise StoreError(f"could not read the store {self.path}: {err}") from err
        finally:
            self._release(cur)

    def export_blueprint_counts(
        self, filters: QueueFilters, *, with_reference: bool = True
    ) -> dict[str, int]:
        """Blueprints an export (with the reference calls or not) would read but cannot take
        whole: "plan" and "eval" (the held-out split)."""
        return self._read(
            lambda cur: store_export_query.blueprint_counts(
                cur, filters, with_reference=with_reference
            )
        )

    def export_answer_counts(self, filters: QueueFilters) -> dict[str, int]:
        """Proposals matching `filters` that the export rule takes ("answers") and those it leaves
        out, by reason (`store.export_rows.ANSWER_COUNTS`)."""
        return self._read(lambda cur: store_export_query.answer_counts(cur, filters))
