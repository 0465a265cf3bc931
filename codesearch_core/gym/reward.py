"""The reward of an episode, computed once, at its end, from what the agent submitted.

Components (all in the episode's info):
- `R_submit`: 1 when the agent submitted, else 0 (and the total is 0: an episode that never
  points at anything earns nothing, however well it searched);
- `R_find`: the coverage-weighted span F-beta of the submitted locations against the expected
  spans (`settings.beta`, default 1: F1; `grading.f_beta`), `R_scope`: their file IoU
  (`grading.grade`, the numbers `codesearch grade` prints). Expected spans marked supporting are
  neither required nor penalised (`grading.spans`);
- `R_turns`: -(turns beyond `free_turns`), `R_calls`: -(calls beyond `free_calls`), where every
  call but the submit counts, refused ones too: an invalid call costs what a valid one does;
- `R_pcre2_rule`: -(ripgrep calls whose pattern needs PCRE2 but did not ask for it).

    total = clamp(w.submit·R_submit + w.find·R_find + w.scope·R_scope + w.turn·R_turns
                  + w.call·R_calls + w.pcre2_rule·R_pcre2_rule, -1, 1)

With the default weights (`settings.RewardWeights`) an episode that submits exactly the expected
spans within the free budget earns 1.0.

Recorded beside the reward and never summed into it (`episode_metrics`, the episode's
`info()["metrics"]`): `precision` and `recall` (the grade's span precision and recall; 0 without
a submit), `calls_per_turn` (calls, refused ones too, over turns), and `evidence_drop`: of the
essential expected spans that some finding of the agent's searches shared a line with
(`evidence_seen` of them), the share that no submitted location shares a line with; 0 when its
searches showed it none.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from codesearch_core.grading import f_beta, grade, touched
from codesearch_core.gym.settings import GymSettings, RewardWeights
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
        "R_find": f_beta(g, settings.beta) if g is not None else 0.0,
        "R_scope": g.file_iou if g is not None else 0.0,
        "R_turns": float(-max(0, turns - settings.free_turns)),
        "R_calls": float(-max(0, calls - settings.free_calls)),
        "R_pcre2_rule": float(-pcre2_offences),
    }
    if submitted is None:
        return EpisodeReward(0.0, components, None)
    total = sum(weighted_terms(components, w).values())
    return EpisodeReward(min(1.0, max(-1.0, total)), components, g)


#: The `RewardWeights` field that weighs each component.
WEIGHT_OF: Final = {"R_submit": "submit", "R_find": "find", "R_scope": "scope", "R_turns": "turn",
                    "R_calls": "call", "R_pcre2_rule": "pcre2_rule"}  # fmt: skip


def weighted_terms(components: Mapping[str, float], weights: RewardWeights) -> dict[str, float]:
    """Each component times its weight, in the components' order: the terms whose sum the reward
    clamps to [-1, 1] (the trajectory view shows them, so a reader can add them up)."""
    return {
        name: getattr(weights, WEIGHT_OF[name]) * value
        for name, value in components.items()
        if name in WEIGHT_OF
    }


#: The recorded metrics' names (`episode_metrics`), in the order they are reported.
METRICS: Final = ("precision", "recall", "calls_per_turn", "evidence_seen", "evidence_drop")


def episode_metrics(
    grade: Grade | None,
    essential: Sequence[Span],
    seen: Collection[int],
    submitted: Sequence[Span] | None,
    *,
    turns: int,
    calls: int,
) -> dict[str, float]:
    """The recorded metrics (module docstring); `seen`: indices of the `essential` spans the
    agent's searches showed it (`grading.touched` over their findings)."""
    kept = touched([essential[i] for i in sorted(seen)], submitted or ())
    return {
        "precision": grade.span_precision if grade is not None else 0.0,
        "recall": grade.span_recall if grade is not None else 0.0,
        "calls_per_turn": calls / turns if turns else 0.0,
        "evidence_seen": float(len(seen)),
        "evidence_drop": (len(seen) - len(kept)) / len(seen) if seen else 0.0,
    }
