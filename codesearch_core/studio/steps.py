"""The Episodes card's step labels (issue 39): the episode's calls as steps a reviewer walks with
keys, each one's label as this reviewer sees it (their own label; others' only counted, the review
being blind), and the calls of one turn as the "correct this step" editor starts them. The labels
are the store's (`store.steps`); a correction is the gym's (`gym.correct_step`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from codesearch_core.store import StepLabel, StoredEpisode
from codesearch_core.studio.trajectory import CallView, Trajectory


@dataclass(frozen=True, slots=True)
class Step:
    """One call of the episode: turn `turn`, call `call` of that turn (both from 1)."""

    turn: int
    call: int
    view: CallView

    @property
    def title(self) -> str:
        return f"turn {self.turn}, call {self.call}: {self.view.name}"


@dataclass(frozen=True, slots=True)
class StepMark:
    """A step as one reviewer sees it: their own label (None: not labelled by them) and how many
    others labelled it (blind: not what they said)."""

    mine: str | None
    others: int

    @property
    def text(self) -> str:
        parts = [f"your label: **{self.mine}**" if self.mine else "not labelled by you"]
        if self.others:
            parts.append(f"{self.others} other label{'s' if self.others != 1 else ''}")
        return " · ".join(parts)


def steps_of(view: Trajectory) -> list[Step]:
    """Every call of the episode in order, the steps a reviewer labels."""
    return [
        Step(turn.number, index, call)
        for turn in view.turns
        for index, call in enumerate(turn.calls, start=1)
    ]


def step_marks(labels: Sequence[StepLabel], reviewer: str) -> dict[tuple[int, int], StepMark]:
    """Each labelled step's mark for `reviewer`, keyed by (turn, call)."""
    mine: dict[tuple[int, int], str] = {}
    others: dict[tuple[int, int], int] = {}
    who = reviewer.strip()
    for label in labels:
        key = (label.turn, label.call)
        if label.reviewer == who:
            mine[key] = label.label
        else:
            others[key] = others.get(key, 0) + 1
    return {key: StepMark(mine.get(key), others.get(key, 0)) for key in {*mine, *others}}


def turn_calls_text(episode: StoredEpisode, turn: int) -> str:
    """The calls of turn `turn` (from 1) as the correction editor starts them: a JSON list of
    `{"name", "arguments"}`, what `gym.correct_step` takes back."""
    turns: Any = episode.trajectory.get("turns") or []
    calls: Sequence[Mapping[str, Any]] = turns[turn - 1] if 0 < turn <= len(turns) else []
    plain = [{"name": c.get("name"), "arguments": c.get("arguments")} for c in calls]
    return json.dumps(plain, indent=2, ensure_ascii=False)
