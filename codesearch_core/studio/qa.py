"""The QA queue's logic (Review page): which sampled item comes next for a reviewer, and the card's
figures (the item as sampled, its expected spans, its facts, the data set it is from, the reviews).
Accept says the item is correct, reject that it is not (`store.qa`); the card's estimate is
`codesearch dataset card DIR` (`dataset.sample.write_estimate`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from codesearch_core.dataset import spans_of
from codesearch_core.models import Span
from codesearch_core.store import QA, DecisionEvent, QAItem, Store, Voted
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


def next_qa_id(store: Store, reviewer: str) -> str | None:
    """The next sampled item `reviewer` should judge, leased to them; None when they are done."""
    return store.queue(QA).lease_next(None, reviewer)
