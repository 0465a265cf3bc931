"""The Review page's logic: which item comes next, its findings diff, and re-running an edited call."""

from __future__ import annotations

from typing import Final

from codesearch_core import corpora
from codesearch_core.grading import diff_findings
from codesearch_core.models import Proposal, ToolCall
from codesearch_core.store import QueueFilters, ReviewItem, Store
from codesearch_core.studio.diff import FindingRow, finding_rows
from codesearch_core.verify import VerifyTask, verify_one

# --- review -------------------------------------------------------------------------------------

#: Reasons a curator picks from when rejecting; free text goes in the note.
REJECT_REASONS: Final[tuple[str, ...]] = (
    "misses expected findings",
    "finds too much",
    "wrong tool",
    "wrong scope (paths, file types, language)",
    "needs pcre2",
    "invalid call",
    "other",
)
#: The engine name recorded for a proposal a curator edited by hand in the Review page.
EDIT_ENGINE: Final = "edit"


def next_item_id(store: Store, filters: QueueFilters, after_id: str | None = None) -> str | None:
    """The item to show next: the first match after `after_id` in queue order, wrapping round to the
    start (an edited proposal arrives at the end, and its parent still waits near the start)."""
    item = store.next_review_item(filters, after_id) if after_id else None
    if item is None:
        item = store.next_review_item(filters)
    return item.proposal_id if item else None


def finding_rows_for(item: ReviewItem) -> tuple[FindingRow, ...] | None:
    """The findings diff of a review item; None when it was never executed."""
    if item.execution is None:
        return None
    return finding_rows(diff_findings(item.execution.findings, item.blueprint.expected))


def rerun_edited(store: Store, item: ReviewItem, call: ToolCall, reviewer: str) -> str:
    """Store `call` as a new proposal whose parent is the item's proposal, execute and grade it,
    and return its id. The same call proposed before for this blueprint is that proposal again."""
    parent = item.proposal
    proposal = Proposal(
        blueprint_id=item.blueprint.id,
        engine=EDIT_ENGINE,
        model=reviewer.strip() or "curator",
        raw_text=call.to_json(),
        call=call,
        valid=True,
        prompt=parent.proposal.prompt,
        mutation_kind=parent.proposal.mutation_kind,
        parent_id=parent.id,
    )
    (proposal_id,) = store.add_proposals([proposal])
    bp = item.blueprint
    outcome = verify_one(
        VerifyTask(
            proposal_id=proposal_id,
            call_json=call.to_json(),
            corpus=bp.corpus,
            corpus_root=str(corpora.corpus_root(bp.corpus)),
            expected=bp.expected,
        )
    )
    store.record_execution_and_grade(proposal_id, outcome.run, outcome.grade, outcome.reward)
    return proposal_id
