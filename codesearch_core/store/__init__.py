"""The curation store: one DuckDB file of blueprints, proposals, runs, grades and decisions.

Public API: `Store` (`store.core`: the handle; every read and write goes through it; each review
queue is `store.queue(kind)`, a `store.queue.Queue`, and the data beside the queues are its parts:
`store.blueprints`, `.drafts`, `.drift`, `.episodes`, `.evals`, `.qa`, `.guidelines`, `.steps`)
and the records it takes and returns (`store.types`: `QueueFilters`, `ReviewItem`, `ImportReport`, ...).
The other modules are its parts: `connect` (opening a file), `schema` (tables, migrations),
`writes`, `queries`, `rows`, `dashboard`, `export_rows`, `pinning` (snapshots and drift: `DriftItem`,
`StaleRun`, `corpus_snapshot`), `evals` (eval runs: `EvalRun`, `EvalItem`, `EvalAnswer`, `UNFINISHED`; the
split), `episodes` (the gym's kept episodes: `StoredEpisode`), `queue_kinds` (the kinds of item a
review queue holds: `PROPOSAL`, `DRAFT`, `DRIFT`, `EPISODE`, `QA`), `qa` (a data set's QA sample
in the queue: `QADataset`, `QAItem`, `QAImport`), `to_do` (a reviewer's to-do set, for the lease
and the progress bar), `guidelines` (the annotation
guidelines: `Guidelines`), `step_labels` (a label per call of an episode: `STEP_LABELS`,
`StepLabel`, `StepSummary`; corrected episodes),
`bulk` (a lead's bulk actions: `BulkPlan`), `text_match` (what a search
matches). Imports `corpora` and below; importing
files into it (`ingest`) and exporting from it (`export`) are layers above.
"""

from codesearch_core.store.bulk import BulkPlan
from codesearch_core.store.core import Store
from codesearch_core.store.decisions import check_reviewer
from codesearch_core.store.drafts import DRAFT_STATUSES, Draft
from codesearch_core.store.episodes import StoredEpisode, episode_id_of
from codesearch_core.store.evals import PASS_REWARD, UNFINISHED, EvalAnswer, EvalItem, EvalRun
from codesearch_core.store.filters import (
    DraftFilters,
    DriftFilters,
    EpisodeFilters,
    ItemFilters,
    QAFilters,
    QueueFilters,
)
from codesearch_core.store.guidelines import Guidelines
from codesearch_core.store.pinning import DriftItem, StaleRun, corpus_snapshot
from codesearch_core.store.qa import QADataset, QAImport, QAItem, settled_verdicts
from codesearch_core.store.queue_kinds import DRAFT, DRIFT, EPISODE, KINDS, PROPOSAL, QA, kind_of
from codesearch_core.store.rows import utc_now
from codesearch_core.store.step_labels import STEP_LABELS, StepLabel, StepSummary
from codesearch_core.store.types import (
    Agreement,
    AuditEntry,
    AuditFilters,
    BlueprintConflictError,
    BlueprintFilters,
    DashboardStats,
    DecisionEvent,
    DecisionState,
    ExportRow,
    ImportReport,
    PendingExecution,
    QueueGroup,
    QueueStats,
    ReviewItem,
    ReviewSettings,
    StaleDecisionError,
    UserRow,
    Voted,
)

__all__ = [
    "DRAFT",
    "DRAFT_STATUSES",
    "DRIFT",
    "EPISODE",
    "KINDS",
    "PASS_REWARD",
    "PROPOSAL",
    "QA",
    "STEP_LABELS",
    "UNFINISHED",
    "Agreement",
    "AuditEntry",
    "AuditFilters",
    "BlueprintConflictError",
    "BlueprintFilters",
    "BulkPlan",
    "DashboardStats",
    "DecisionEvent",
    "DecisionState",
    "Draft",
    "DraftFilters",
    "DriftFilters",
    "DriftItem",
    "EpisodeFilters",
    "EvalAnswer",
    "EvalItem",
    "EvalRun",
    "ExportRow",
    "Guidelines",
    "ImportReport",
    "ItemFilters",
    "PendingExecution",
    "QADataset",
    "QAFilters",
    "QAImport",
    "QAItem",
    "QueueFilters",
    "QueueGroup",
    "QueueStats",
    "ReviewItem",
    "ReviewSettings",
    "StaleDecisionError",
    "StaleRun",
    "StepLabel",
    "StepSummary",
    "Store",
    "StoredEpisode",
    "UserRow",
    "Voted",
    "check_reviewer",
    "corpus_snapshot",
    "episode_id_of",
    "kind_of",
    "settled_verdicts",
    "utc_now",
]
