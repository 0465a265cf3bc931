"""The reward of an episode, computed once, at its end, from what the agent submitted.

Components (all in the episode's info):
- `R_submit`: 1 when the agent submitted, else 0 (and the total is 0: an episode that never
  points at anything earns nothing, however well it searched);
- `R_find`: the coverage-weighted span F1 of the submitted locations against the expected spans,
  `R_scope`: their file IoU (`grading.grade`, the numbers `codesearch grade` prints);
- `R_turns`: -(turns beyond `free_turns`), `R_calls`: -(calls beyond `free_calls`), where every
  call but the submit counts, refused ones too: an invalid call costs what a valid one does;
- `R_pcre2_rule`: -(ripgrep calls whose pattern needs PCRE2 but did not ask for it).

    total = clamp(w.submit·R_submit + w.find·R_find + w.scope·R_scope + w.turn·R_turns
                  + w.call·R_calls + w.pcre2_rule·R_pcre2_rule, -1, 1)

With the default weights (`settings.RewardWeights`) an episode that submits exactly the expected
spans within the free budget earns 1.0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from codesearch_core.grading import grade
from codesearch_core.gym.settings import GymSettings
from codesearch_core.models import Grade, Span


@dataclass(frozen=True, slots=True)
class EpisodeReward:
    total: float
    components: dict[str, float]
    grade: Grade | None


def episode_reward(
    submitted: Sequence[Span] | None,
    expected: Sequence[Span],
    *,
    turns: int,
    calls: int,
    pcre2_offences: int,
    settings: GymSettings,
) -> EpisodeReward:
    w = settings.weights
    g = grade(list(submitted), list(expected)) if submitted is not None else None
    components = {
        "R_submit": 1.0 if submitted is not None else 0.0,
        "R_find": g.span_f1 if g is not None else 0.0,
        "R_scope": g.file_iou if g is not None else 0.0,
        "R_turns": float(-max(0, turns - settings.free_turns)),
        "R_calls": float(-max(0, calls - settings.free_calls)),
        "R_pcre2_rule": float(-pcre2_offences),
    }
    if submitted is None:
        return EpisodeReward(0.0, components, None)
    total = (
        w.submit * components["R_submit"]
        + w.find * components["R_find"]
        + w.scope * components["R_scope"]
        + w.turn * components["R_turns"]
        + w.call * components["R_calls"]
        + w.pcre2_rule * components["R_pcre2_rule"]
    )
    return EpisodeReward(min(1.0, max(-1.0, total)), components, g)
