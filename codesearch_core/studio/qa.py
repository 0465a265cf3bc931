"""The QA queue's logic (Review page): which sampled item comes next for a reviewer, and the card's
figures (the item as sampled, its expected spans, its facts, the data set it is from, the reviews).
Accept says the item is correct, reject that it is not (`store.qa`); the card's estimate is
`codesearch dataset card DIR` (`dataset.sample.write_estimate`), and the Overview's measured error
rate of the queue, overall and per data set, is `error_rates`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from codesearch_core.dataset import spans_of, wilson
from codesearch_core.models import Span
from codesearch_core.store import QA, DecisionEvent, QAItem, QueueStats, Store, Voted
from codesearch_core.studio.episodes import votes_from

#: What fills the QA queue, said where it is empty.
QA_SAMPLE_COMMAND: Final = "codesearch dataset sample DIR --n 100 --stratify tag,language --queue"
#: What turns its decisions into the card's error rate.
QA_CARD_COMMAND: Final = "codesearch dataset card DIR"
#: Why a QA item is incorrect (the Incorrect button's reason; the note says more).
QA_REJECT_REASONS: Final[tuple[str, ...]] = (
    "the call does not answer the intent",
    "misses spans the intent asks for",
    "expects spans the intent does not ask for",
    "the intent is unclear or ambiguous",
    "wrong language, difficulty or tags",
    "other",
)
#: The item's facts the card lists, in this order (an item's fields, `dataset.items`).
FACTS: Final = ("corpus", "language", "difficulty", "split", "tool", "rule", "source")


@dataclass(frozen=True, slots=True)
class QACard(Voted):
    """One sampled item on the Review page's QA card, with its reviews."""

    qa: QAItem
    #: Each reviewer's live vote: reviewer -> (action, event id), in the order they voted.
    votes: Mapping[str, tuple[str, int]]
    history: tuple[DecisionEvent, ...]

    @property
    def qa_id(self) -> str:
        return self.qa.qa_id

    @property
    def state(self) -> str | None:
        """None (open), 'accept' (correct), 'reject' (incorrect) or 'conflict'."""
        return self.qa.decision

    @property
    def item(self) -> Mapping[str, Any]:
        return self.qa.item

    @property
    def spans(self) -> tuple[Span, ...]:
        """The spans the item expects its call to find."""
        return spans_of(self.item)

    @property
    def call_json(self) -> str:
        """The item's reference call (a plan: its steps) as the card shows it."""
        ref = dict(self.item.get("reference", {}))
        # The store keeps the item's keys sorted; a call reads name first, as everywhere else.
        ordered = {"name": ref.pop("name"), **ref} if "name" in ref else ref
        return json.dumps(ordered, indent=2, ensure_ascii=False)

    @property
    def facts(self) -> dict[str, str]:
        """What the item is: its corpus, language, difficulty, split, tool, rule and tags, and the
        stratum it was drawn from."""
        out = {k: str(self.item[k]) for k in FACTS if self.item.get(k) not in (None, "")}
        tags = [str(t) for t in self.item.get("tags", [])]
        out["tags"] = ", ".join(tags) or "-"
        out["stratum"] = self.qa.stratum
        return out

    @property
    def dataset_line(self) -> str:
        """The data set the item belongs to, as the card's caption says it."""
        d = self.qa.dataset
        return (
            f"data set **{d.name}** `{d.dataset_id}` · {d.folder} · recipe `{d.recipe_sha256[:12]}`"
        )


def qa_card(store: Store, qa_id: str) -> QACard | None:
    qa = store.qa.get(qa_id)
    if qa is None:
        return None
    history = store.queue(QA).history(qa_id)
    return QACard(qa=qa, votes=votes_from(history), history=history)


@dataclass(frozen=True, slots=True)
class ErrorRate:
    """The measured error rate of QA verdicts: `incorrect` of `judged` (the settled items: an
    accept says correct, a reject incorrect; open items and conflicts are no verdict yet, as on the
    data set's card), with its 95% Wilson interval; the rate and the bounds are None while nothing
    is judged. `dataset_id` is "" for the queue as a whole."""

    label: str
    dataset_id: str
    judged: int
    incorrect: int
    rate: float | None
    low: float | None
    high: float | None

    @property
    def interval(self) -> str:
        """The rate and its interval in words: "12% (95% CI 5%-25%), 3 incorrect of 25 judged"."""
        if self.rate is None:
            return "no verdict yet"
        return (
            f"{self.rate:.0%} (95% CI {self.low:.0%}-{self.high:.0%}), "
            f"{self.incorrect:,} incorrect of {self.judged:,} judged"
        )


def _error_rate(label: str, dataset_id: str, incorrect: int, judged: int) -> ErrorRate:
    if not judged:
        return ErrorRate(label, dataset_id, 0, 0, None, None, None)
    # The data set card's interval (`dataset.sample.wilson`), of the share incorrect.
    low, high = wilson(incorrect, judged)
    return ErrorRate(label, dataset_id, judged, incorrect, incorrect / judged, low, high)


def error_rates(stats: QueueStats) -> tuple[ErrorRate, tuple[ErrorRate, ...]]:
    """The QA queue's measured error rate (`store.queue(QA).stats()`), and each data set's (the
    queue's groups, largest sample first): the Overview's figures for a lead."""
    overall = _error_rate("all data sets", "", stats.rejected, stats.settled)
    return overall, tuple(
        _error_rate(g.label, g.key, g.rejected, g.accepted + g.rejected) for g in stats.groups
    )
