"""The Review page's logic: which item comes next, its findings diff, and re-running an edited call."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Final, Protocol

from codesearch_core import corpora
from codesearch_core.errors import StoreError
from codesearch_core.grading import diff_findings
from codesearch_core.models import Proposal, ToolCall
from codesearch_core.store import (
    DRAFT,
    DRIFT,
    EPISODE,
    PROPOSAL,
    QA,
    DecisionEvent,
    DecisionState,
    ItemFilters,
    PendingExecution,
    QueueFilters,
    ReviewItem,
    Store,
)
from codesearch_core.studio.diff import FindingRow, finding_rows
from codesearch_core.studio.episodes import EPISODE_REJECT_REASONS
from codesearch_core.studio.qa import QA_REJECT_REASONS
from codesearch_core.studio.synthesized import DRAFT_REJECT_REASONS
from codesearch_core.verify import task_for, verify_one

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
#: Each queue's reasons (a drift item X rejects is an accepted proposal: a proposal's reasons).
_REJECT_REASONS_OF: Final[Mapping[str, tuple[str, ...]]] = {
    PROPOSAL: REJECT_REASONS, DRIFT: REJECT_REASONS, DRAFT: DRAFT_REJECT_REASONS,
    EPISODE: EPISODE_REJECT_REASONS, QA: QA_REJECT_REASONS,
}  # fmt: skip
#: The engine name recorded for a proposal a curator edited by hand in the Review page.
EDIT_ENGINE: Final = "edit"


def reject_reasons(kind: str) -> tuple[str, ...]:
    """The reasons a reject on `kind`'s queue picks from, beside the card's note (none for a kind
    without). Every queue's reject takes a reason, and none is required, as on Proposals: the
    reviewer may say it in the note instead (issue 39: Episodes and Drafts took none at all)."""
    return _REJECT_REASONS_OF.get(kind, ())


def next_item_id(store: Store, filters: QueueFilters, after_id: str | None = None) -> str | None:
    """The item to show next.

    A reviewer's to-do queue ("undecided" with a reviewer) comes from the store's leases: the next
    item they still have to review, kept away from other reviewers while they look at it. Other
    queues (accepted, conflicts, ...) are browsed: the first match after `after_id` in queue order,
    wrapping round to the start (an edited proposal arrives at the end, its parent near the start).
    """
    if filters.reviewer and DecisionState(filters.decision) is DecisionState.UNDECIDED:
        return store.queue(PROPOSAL).lease_next(filters, filters.reviewer)
    item = store.next_review_item(filters, after_id) if after_id else None
    if item is None:
        item = store.next_review_item(filters)
    return item.proposal_id if item else None


def next_item_of(
    store: Store,
    kind: str,
    reviewer: str,
    filters: ItemFilters | None = None,
    after_id: str | None = None,
) -> str | None:
    """The item for the card of a queue other than Proposals (`filters`: the kind's own).

    Under no filters or the undecided state it is the reviewer's next to do, leased to them. A
    state that is nobody's to-do (the conflicts a lead settles, decided items) is browsed: the
    first match after `after_id` in queue order, wrapping round, nothing leased.
    """
    if not browsed(filters):
        return store.queue(kind).lease_next(filters, reviewer)
    return store.queue(kind).browse(filters, after_id)


def state_words(state: DecisionState) -> str:
    """How a card's head counts the items of a state: "3 in conflict", "12 accepted"."""
    words = {DecisionState.CONFLICT: "in conflict", DecisionState.ANY: "in all"}
    return words.get(DecisionState(state), DecisionState(state).value)


def browsed(filters: ItemFilters | None) -> bool:
    """Whether `filters` select a state that is nobody's to-do (conflicts, decided items): their
    items are browsed in queue order, not leased."""
    return filters is not None and DecisionState(filters.decision) is not DecisionState.UNDECIDED


#: Query-parameter names of the review filters (the page address carries them, so a reload or a
#: bookmark keeps them; the reviewer is a parameter of its own), and of the item on the card.
_TEXT_FILTERS: Final = (
    "tool", "language", "tag", "text", "blueprint_id", "proposed_tool", "engine", "model",
    "mutation_kind",
)  # fmt: skip
FILTER_PARAMS: Final = (*_TEXT_FILTERS, "valid_only", "min_f1", "max_f1", "decision")
ITEM_PARAM: Final = "item"


def filters_to_params(filters: QueueFilters) -> dict[str, str]:
    """The review filters as query parameters: those that are set, and the decision state."""
    params: dict[str, str] = {
        k: str(getattr(filters, k)) for k in _TEXT_FILTERS if getattr(filters, k)
    }
    if filters.valid_only:
        params["valid_only"] = "1"
    for key in ("min_f1", "max_f1"):
        value = getattr(filters, key)
        if value is not None:
            params[key] = f"{value:g}"
    params["decision"] = DecisionState(filters.decision).value
    return params


def filters_from_params(params: Mapping[str, str], reviewer: str | None) -> QueueFilters:
    """Review filters from query parameters; a value that does not parse is left out (a hand-
    edited address should not break the page)."""

    def number(key: str) -> float | None:
        try:
            value = float(params.get(key, ""))
        except ValueError:
            return None
        return min(1.0, max(0.0, value)) if math.isfinite(value) else None

    try:
        decision = DecisionState(params.get("decision", DecisionState.UNDECIDED.value))
    except ValueError:
        decision = DecisionState.UNDECIDED
    text = {k: (params.get(k) or "").strip()[:200] or None for k in _TEXT_FILTERS}
    return QueueFilters(
        **text,
        valid_only=params.get("valid_only") == "1",
        min_f1=number("min_f1"),
        max_f1=number("max_f1"),
        decision=decision,
        reviewer=reviewer or None,
    )


def accept_blocker(item: ReviewItem) -> str | None:
    """Why the card's Accept is disabled, or None: only a valid call that ran without an error can
    be accepted (the store refuses the rest too; this says why before the click)."""
    if item.proposal.proposal.call is None:
        return (
            "An invalid call cannot be accepted: reject it, or edit the call below and accept the "
            "new proposal."
        )
    if item.execution is None:
        return "Not executed yet: run it first (Run it now)."
    if not item.execution.ok:
        return "Its run failed: only a call that ran without an error can be accepted."
    return None


def queue_place(seen: Sequence[tuple[str, str | None]], current: str, done: int) -> int:
    """The card's place in the reviewer's share ("Episode 3 of 219"): an item they decided
    (stepped back to with Previous) is where it falls in the order they decided them, not after
    all of them (issue 39: the first item read "2 of 219" after two steps back); an item still
    to do comes after everything they decided."""
    ids = [item_id for item_id, _ in seen]
    return ids.index(current) + 1 if current in ids else done + 1


class QueueCard(Protocol):
    """What every queue's card knows of its reviews (a proposal's `ReviewItem`, an
    `EpisodeCard`, a `QACard`): the item's settled state, each reviewer's vote and the log. The
    cards share `vote_of` through `store.Voted`; the rest of each card is its kind's."""

    @property
    def state(self) -> str | None: ...

    @property
    def votes(self) -> Mapping[str, tuple[str, int]]: ...

    @property
    def history(self) -> tuple[DecisionEvent, ...]: ...

    def vote_of(self, reviewer: str) -> tuple[str, int] | None: ...


def still_to_do(card: QueueCard, reviewer: str) -> bool:
    """Whether the card's item is still in the reviewer's to-do queue, whatever its kind: open,
    and not voted on by them (another tab of theirs, or enough other reviewers, may have settled
    it since it was shown)."""
    return card.state is None and card.vote_of(reviewer) is None


def reviews_seen(
    card: QueueCard, reviewer: str, words: Mapping[str, str] | None = None
) -> tuple[str, tuple[DecisionEvent, ...]]:
    """The card's reviews as `reviewer` may see them: a line ("ann **accept** · bob **reject**")
    and the decision log. Review is blind: while the item is still to do for them, others'
    votes and events are hidden and only counted, so a second review is not anchored on the
    first (issue 39; Label Studio and Argilla hide them the same way). Once they have voted, or
    the item is settled or in conflict (a lead settling it), everything shows."""
    said = words or {}
    if still_to_do(card, reviewer):
        others = [r for r in card.votes if r != reviewer.strip()]
        line = f"{len(others)} hidden until you give yours" if others else "none yet"
        mine = tuple(e for e in card.history if e.reviewer == reviewer.strip())
        return line, mine
    line = " · ".join(f"{r} **{said.get(a, a)}**" for r, (a, _) in card.votes.items())
    return line or "none yet", card.history


def finding_rows_for(item: ReviewItem) -> tuple[FindingRow, ...] | None:
    """The findings diff of a review item; None when it was never executed."""
    if item.execution is None:
        return None
    return finding_rows(diff_findings(item.execution.findings, item.blueprint.expected))


def run_item(store: Store, item: ReviewItem) -> None:
    """Execute and grade one stored proposal now (the Review card's "Run it now")."""
    _verify_and_record(store, item, item.proposal.id, item.proposal.proposal.call)


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
    _verify_and_record(store, item, proposal_id, call)
    return proposal_id


def _verify_and_record(
    store: Store, item: ReviewItem, proposal_id: str, call: ToolCall | None
) -> None:
    """Run a call against the item's blueprint as verification does, and store the outcome unless
    the blueprint changed since the card was drawn (then its grade would be stale)."""
    if call is None:
        raise StoreError("an invalid call cannot run: edit it, or reject the proposal")
    bp = item.blueprint
    pending = PendingExecution(
        proposal_id, call.to_json(), bp.corpus, bp.expected, grading_key=item.grading_key
    )
    outcome = verify_one(task_for(pending, str(corpora.corpus_root(item.blueprint.corpus))))
    stale = store.record_executions_and_grades(
        [(proposal_id, outcome.run, outcome.grade, outcome.reward)],
        graded_against={proposal_id: item.grading_key},
    )
    if stale:
        raise StoreError(
            "the blueprint was edited while this ran, so the grade would be stale; nothing was "
            "stored: open the item again and run it"
        )
