"""The review queues' filters: which items a queue shows, leases and a lead's bulk action takes
(`QueueFilters` for proposals and exports, one type for each other kind, issue 39). How a field
becomes SQL is its kind's (`store.queue_kinds`, `store.queries`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

from codesearch_core.store.types import DecisionState


def set_filters(filters: Any) -> dict[str, Any]:
    """The fields of a filters record that are set, for manifests and logs."""
    return {k: (str(v) if isinstance(v, StrEnum) else v) for k, v in asdict(filters).items() if v}


@dataclass(frozen=True, slots=True)
class QueueFilters:
    """Filters of the review queue and of exports. Unset fields do not filter.

    `text` is a case-insensitive substring of the intent, the pattern or a note, of the proposal
    or its blueprint (`store.text_match`). `tool`, `language`, `tag` and `split` are about the
    blueprint; `proposed_tool`, `engine`, `model`, `mutation_kind` and `valid_only` about the proposal;
    `min_f1`/`max_f1` bound the grade's span F1 (inclusive) and drop ungraded items.
    """

    tool: str | None = None
    language: str | None = None
    tag: str | None = None
    text: str | None = None
    blueprint_id: str | None = None
    proposed_tool: str | None = None
    engine: str | None = None
    model: str | None = None
    mutation_kind: str | None = None
    valid_only: bool = False
    min_f1: float | None = None
    max_f1: float | None = None
    decision: DecisionState = DecisionState.UNDECIDED
    reviewer: str | None = None  # whose queue: "undecided", "skipped" and "mine" are per reviewer
    #: The blueprint's split ("train" or "eval"); exports set "train" unless asked for the
    #: held-out blueprints too.
    split: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The filters that are set, for manifests and logs."""
        return set_filters(self)


# The other queues' filters (issue 39). Each field that is set narrows the queue; how a field
# becomes SQL is its kind's (`store.queue_kinds`), so a queue, its lease and a lead's bulk action
# read them one way. `decision` and `reviewer` mean what they mean in `QueueFilters`; `text` is a
# case-insensitive substring.


@dataclass(frozen=True, slots=True)
class EpisodeFilters:
    """The Episodes queue: reward bounds (inclusive), where the episode came from, a tool it
    called in any turn (e.g. "read_file"), how it ended; `text` matches the blueprint's id or
    intent."""

    min_reward: float | None = None
    max_reward: float | None = None
    engine: str | None = None
    model: str | None = None
    corpus: str | None = None
    tool_used: str | None = None
    end_reason: str | None = None
    blueprint_id: str | None = None
    text: str | None = None
    decision: DecisionState = DecisionState.UNDECIDED
    reviewer: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return set_filters(self)


@dataclass(frozen=True, slots=True)
class QAFilters:
    """The QA queue: the sampled item's rule, source and split, the data set's name; `text`
    matches the item's id or intent."""

    rule: str | None = None
    source: str | None = None
    split: str | None = None
    dataset: str | None = None
    text: str | None = None
    decision: DecisionState = DecisionState.UNDECIDED
    reviewer: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return set_filters(self)


@dataclass(frozen=True, slots=True)
class DraftFilters:
    """The Drafts queue: the synthesis rule, corpus, language and tool; `text` matches the
    draft's id or intent."""

    rule: str | None = None
    corpus: str | None = None
    language: str | None = None
    tool: str | None = None
    text: str | None = None
    decision: DecisionState = DecisionState.UNDECIDED
    reviewer: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return set_filters(self)


@dataclass(frozen=True, slots=True)
class DriftFilters:
    """The Drift queue: what drifted ("proposal" or "reference"); `text` matches the item's or
    its blueprint's id."""

    drifted: str | None = None
    text: str | None = None
    decision: DecisionState = DecisionState.UNDECIDED
    reviewer: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return set_filters(self)


#: Filters of any queue: each kind takes its own (`QueueKind.filters`).
ItemFilters = QueueFilters | EpisodeFilters | QAFilters | DraftFilters | DriftFilters
