"""What the store hands back: plain frozen records, no database handles inside."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from enum import StrEnum
from typing import Any, ClassVar

from codesearch_core.access import Role
from codesearch_core.errors import ErrorKind, InputFileError, StoreError
from codesearch_core.models import (
    Blueprint,
    DecisionAction,
    Finding,
    Grade,
    Proposal,
    Reward,
    RunResult,
    Span,
)


class BlueprintConflictError(InputFileError):
    """A blueprint whose id is stored already with another intent, corpus or call."""

    def __init__(self, blueprint_id: str, *, source: str = "", line: int = 0) -> None:
        super().__init__(
            f"blueprint {blueprint_id!r} is already stored with a different intent, corpus or "
            "call; edit it in the app, or give this one a new id",
            source=source,
            line=line,
        )
        self.blueprint_id = blueprint_id


class StaleDecisionError(StoreError):
    """A decision made on a card that is out of date: the same reviewer decided the item elsewhere."""


class DecisionState(StrEnum):
    """Which items a queue shows. With a reviewer in the filters, "undecided" means "still to do
    for this reviewer" and "skipped"/"mine" mean this reviewer's; without one, any reviewer's."""

    UNDECIDED = "undecided"  # open: needs more reviews (and, with a reviewer, not reviewed by them)
    ACCEPTED = "accepted"  # resolved as accepted
    REJECTED = "rejected"  # resolved as rejected
    CONFLICT = "conflict"  # reviewers disagree and no lead has decided yet
    SKIPPED = "skipped"
    MINE = "mine"  # decided by the reviewer (any action)
    DECIDED = "decided"  # resolved: accepted or rejected
    ANY = "any"


@dataclass(frozen=True, slots=True)
class ReviewSettings:
    """How review works in this store: shared by every reviewer, kept in the store."""

    reviews_per_item: int = 1  # accept/reject votes an item needs before it is resolved
    lease_minutes: float = 5.0  # how long an item shown to a reviewer stays away from others

    MAX_REVIEWS: ClassVar[int] = 20
    MAX_LEASE_MINUTES: ClassVar[float] = 24 * 60.0


@dataclass(frozen=True, slots=True)
class QueueItem:
    """One row of the review queue: enough to list it, not everything the Review page shows."""

    proposal_id: str
    seq: int
    blueprint_id: str
    intent: str
    tool: str
    language: str
    tags: tuple[str, ...]
    proposed_tool: str | None
    engine: str
    model: str
    mutation_kind: str | None
    valid: bool
    span_f1: float | None
    reward: float | None
    decision: (
        str | None
    )  # the item's state: 'accept' / 'reject' (resolved), 'conflict', None (open)


@dataclass(frozen=True, slots=True)
class QueuePage:
    items: tuple[QueueItem, ...]
    total: int
    offset: int


@dataclass(frozen=True, slots=True)
class DecisionEvent:
    """One row of the append-only decision log. `undone` is true once a later undo cancelled it."""

    event_id: int
    item_id: str
    action: DecisionAction
    reviewer: str
    note: str
    reason: str
    ts: datetime
    undoes: int | None = None
    undone: bool = False
    final: bool = False  # a lead's final decision on an item in conflict
    guideline_version: int | None = None  # the guidelines in force when it was made (None: none)
    batch_id: str | None = None  # the lead's bulk action it was part of (`store.bulk`)


@dataclass(frozen=True, slots=True)
class StoredProposal:
    """A proposal as stored: its id, its place in arrival order and how often it was seen."""

    id: str
    seq: int
    proposal: Proposal
    call_hash: str | None
    created_at: datetime
    sightings: int = 1


@dataclass(frozen=True, slots=True)
class Execution:
    """A stored run of a proposal's call (see `models.RunResult`)."""

    ok: bool
    findings: tuple[Finding, ...]
    return_code: int | None
    stderr: str
    elapsed_s: float
    truncated: bool
    error_kind: str | None
    error: str
    executed_at: datetime
    warnings: tuple[str, ...] = ()

    def to_run(self) -> RunResult:
        """The run as the runner returned it (to grade it again without running it again)."""
        return RunResult(
            ok=self.ok,
            findings=self.findings,
            return_code=self.return_code,
            stderr=self.stderr,
            elapsed_s=self.elapsed_s,
            truncated=self.truncated,
            error_kind=None if self.error_kind is None else ErrorKind(self.error_kind),
            error=self.error,
            warnings=self.warnings,
        )


class Voted:
    """What every queue's card (a proposal's `ReviewItem`, an episode's or a QA item's card)
    answers from its `votes` (reviewer: (action, event id)), written once for all of them."""

    __slots__ = ()
    votes: Mapping[str, tuple[str, int]]

    def vote_of(self, reviewer: str) -> tuple[str, int] | None:
        """The reviewer's live vote on the item, or None."""
        return self.votes.get(reviewer.strip())


@dataclass(frozen=True, slots=True)
class ReviewItem(Voted):
    """Everything the Review page shows for one proposal."""

    blueprint: Blueprint
    proposal: StoredProposal
    execution: Execution | None
    grade: Grade | None
    reward: Reward | None
    decision: DecisionEvent | None  # the event that settled the item; None while it is open
    history: tuple[DecisionEvent, ...]
    state: str | None = None  # 'accept' / 'reject' (resolved), 'conflict', or None (open)
    votes: Mapping[str, tuple[str, int]] = field(default_factory=dict)  # reviewer: (action, event)
    grade_current: bool = True  # False: graded before the blueprint's expected spans changed
    grading_key: str = (
        ""  # the blueprint's corpus + expected spans now (see schema.GRADING_KEY_SQL)
    )


@dataclass(frozen=True, slots=True)
class PendingExecution:
    """A proposal that was never executed, with what running and grading it needs."""

    proposal_id: str
    call_json: str | None  # None: the proposal has no valid call (`invalid_reason` says why)
    #: Of its blueprint, only what running and grading need: verification reads thousands of
    #: these, and building whole Blueprints was a third of the parent process's time.
    corpus: str
    expected: tuple[Span, ...]
    invalid_reason: str = ""
    grading_key: str = ""  # the blueprint's corpus + expected spans it is graded against


@dataclass(frozen=True, slots=True)
class BlueprintFilters:
    tool: str | None = None
    language: str | None = None
    tag: str | None = None
    corpus: str | None = None
    difficulty: str | None = None
    text: str | None = None  # the intent, id, notes or pattern, or a proposal's (`text_match`)
    split: str | None = None  # "train" or "eval" (the held-out blueprints)


@dataclass(frozen=True, slots=True)
class BlueprintPage:
    items: tuple[Blueprint, ...]
    total: int
    offset: int


@dataclass(frozen=True, slots=True)
class BlueprintRevision:
    blueprint_id: str
    revision: int
    content_hash: str
    data: Mapping[str, Any]
    source: str
    changed_at: datetime


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import or a batch add did. `ids` follows the input order (duplicates repeat an id)."""

    source: str
    new: int
    existing: int
    errors: tuple[InputFileError, ...] = ()
    ids: tuple[str, ...] = ()

    @property
    def skipped(self) -> int:
        return len(self.errors)


@dataclass(frozen=True, slots=True)
class StoreCounts:
    blueprints: int
    proposals: int
    valid: int
    executed: int
    graded: int
    undecided: int  # open: still needs reviews
    accepted: int  # resolved as accepted
    rejected: int  # resolved as rejected
    skipped: int  # open items somebody skipped
    decision_events: int
    conflicts: int = 0
    episodes: int = 0  # kept by the gym's rollouts


@dataclass(frozen=True, slots=True)
class Agreement:
    """How far reviewers agree, over the items that two or more of them accepted or rejected.

    `percent` is the share of those items on which every vote is the same; `alpha` is
    Krippendorff's alpha (nominal; the `krippendorff` package), None when undefined (fewer than
    two such items, or every vote the same).
    """

    items: int
    percent: float | None
    alpha: float | None
    conflicts: int  # items in conflict now (disagreeing reviews, no lead's decision yet)


@dataclass(frozen=True, slots=True)
class DashboardStats:
    """Counts, rates and chart data for the Overview page. Rates are None when undefined (0/0)."""

    counts: StoreCounts
    acceptance_rate: float | None  # accepted / (accepted + rejected)
    valid_rate: float | None  # valid / proposals
    mean_span_f1: float | None
    decisions_per_day: tuple[tuple[date, str, int], ...]  # (day, action, events) incl. undo
    acceptance_by_tool_language: tuple[tuple[str, str, int, int], ...]  # tool, lang, acc, rej
    span_f1_histogram: tuple[tuple[float, float, int], ...]  # [lo, hi) buckets, last one closed
    tool_confusion: tuple[tuple[str, str, int], ...]  # reference tool, proposed tool|"invalid", n
    reject_mutation_kinds: tuple[tuple[str, int], ...]
    reject_error_kinds: tuple[tuple[str, int], ...]
    reviewers: tuple[tuple[str, int, int, int], ...] = ()  # reviewer, accepts, rejects, skips
    agreement: Agreement = Agreement(0, None, None, 0)
    #: Every queue's: (reviewer, kind, accepts, rejects, skips), and each kind's agreement
    #: (proposals always; another kind once it has votes).
    reviewers_by_queue: tuple[tuple[str, str, int, int, int], ...] = ()
    agreement_by_queue: tuple[tuple[str, Agreement], ...] = ()
    review_settings: ReviewSettings = ReviewSettings()

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["reviewers"] = [
            {"reviewer": r, "accepted": a, "rejected": x, "skipped": s}
            for r, a, x, s in self.reviewers
        ]
        d["reviewers_by_queue"] = [
            {"reviewer": r, "queue": k, "accepted": a, "rejected": x, "skipped": s}
            for r, k, a, x, s in self.reviewers_by_queue
        ]
        d["agreement_by_queue"] = {k: asdict(a) for k, a in self.agreement_by_queue}
        d["decisions_per_day"] = [
            {"day": day.isoformat(), "action": action, "count": n}
            for day, action, n in self.decisions_per_day
        ]
        d["acceptance_by_tool_language"] = [
            {"tool": t, "language": lang, "accepted": a, "rejected": r}
            for t, lang, a, r in self.acceptance_by_tool_language
        ]
        d["span_f1_histogram"] = [
            {"lo": lo, "hi": hi, "count": n} for lo, hi, n in self.span_f1_histogram
        ]
        d["tool_confusion"] = [
            {"reference_tool": r, "proposed_tool": p, "count": n} for r, p, n in self.tool_confusion
        ]
        d["reject_mutation_kinds"] = [
            {"kind": k, "count": n} for k, n in self.reject_mutation_kinds
        ]
        d["reject_error_kinds"] = [{"kind": k, "count": n} for k, n in self.reject_error_kinds]
        return d


@dataclass(frozen=True, slots=True)
class QueueGroup:
    """A queue's items of one group (the kind's `groups`: the QA queue's data sets) by state."""

    key: str
    label: str
    items: int
    open: int
    accepted: int
    rejected: int
    conflicts: int


@dataclass(frozen=True, slots=True)
class QueueStats:
    """One queue's figures for the Overview page (`Queue.stats()`, read in one snapshot): its
    items by state, its decision events per day, its agreement and each reviewer's votes."""

    kind: str
    items: int
    open: int
    accepted: int
    rejected: int
    conflicts: int
    decisions_per_day: tuple[tuple[date, str, int], ...]  # (day, action, events) incl. undo
    agreement: Agreement
    reviewers: tuple[tuple[str, int, int, int], ...]  # reviewer, accepts, rejects, skips
    #: By the kind's groups, largest first; () for a kind without groups.
    groups: tuple[QueueGroup, ...] = ()

    @property
    def settled(self) -> int:
        """Items accepted or rejected (one in conflict waits for a lead)."""
        return self.accepted + self.rejected


@dataclass(frozen=True, slots=True)
class ExportRow:
    """One item leaving the store: a blueprint with a call (a proposal's, or its reference call)."""

    blueprint_id: str
    intent: str
    intent_hash: str
    content_hash: str
    corpus: str
    language: str
    tool: str
    call_json: str | None  # None for an invalid proposal (pairs' rejected side only)
    call_hash: str | None
    raw_text: str
    proposal_id: str | None  # None for the reference call
    action: str | None  # the proposal's current decision; None for the reference call
    engine: str | None
    model: str | None
    grade: Mapping[str, Any] | None
    reward: float | None
    decision: Mapping[str, Any] | None  # provenance of the accept/reject event
    run_ok: bool | None = None  # False: a failed run, exported only as a rejected answer
    #: On a reference row: the blueprint's counter-calls, JSON `[{"call": ..., "why": ...}]`.
    counter_calls_json: str | None = None
    #: On a counter-call row (the pairs export's rejected side): why the call is wrong.
    counter_why: str = ""


@dataclass(frozen=True, slots=True)
class UserRow:
    """A member of the studio and their role (`access.Role`)."""

    name: str
    role: Role
    added_by: str
    added_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class AuditFilters:
    """Which audit rows to list: all that match every filter given."""

    since: datetime | None = None
    actor: str = ""
    #: An action ("decision.accept") or a family of them ("decision").
    action: str = ""
    target: str = ""


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One change: who made it, when, with which role and mode, and what."""

    id: int
    at: datetime
    actor: str
    role: str
    mode: str
    action: str
    target: str
    detail: dict[str, Any]
