"""The settings of an episode (its limits, its free budget, the reward's weights and F-beta). The
OpenEnv server's own settings are its adapter's (`gym.openenv_settings`).

Defaults follow Cognition's SWE-grep (at most 4 turns of up to 8 parallel calls). The free budget
is one search turn and its submit turn, with a full turn of parallel calls: searching wide in one
turn is what a code-search agent should learn, so parallel calls are cheap and turns are not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, Final

from codesearch_core.tools import DEFAULT_TIMEOUT_S

#: `read_file` shows at most this many lines a call.
READ_MAX_LINES: Final = 200
#: A submit names at most this many locations (a blueprint expects far fewer).
SUBMIT_MAX_LOCATIONS: Final = 1000
#: An episode this good counts as a success (the eval's `success_rate`; `PASS_REWARD` of eval runs).
SUCCESS_REWARD: Final = 0.9


@dataclass(frozen=True, slots=True)
class RewardWeights:
    """total = clamp(submit·R_submit + find·R_find + scope·R_scope + turn·R_turns + call·R_calls
    + pcre2_rule·R_pcre2_rule, -1, 1); a perfect episode within the free budget earns exactly 1."""

    submit: float = 0.1
    find: float = 0.6
    scope: float = 0.3
    turn: float = 0.05
    call: float = 0.02
    pcre2_rule: float = 0.5


@dataclass(frozen=True, slots=True)
class GymSettings:
    """One environment's settings (the same for every episode it runs)."""

    max_turns: int = 4
    max_parallel: int = 8
    free_turns: int = 2
    free_calls: int = 8
    timeout_s: float = DEFAULT_TIMEOUT_S
    #: Findings one search keeps: the observation shows 20 and counts the rest, and a search that
    #: would print gigabytes must not hold them all in memory.
    max_findings: int = 2_000
    weights: RewardWeights = RewardWeights()
    #: `R_find` is the span F-beta (`grading.f_beta`): 1 is F1; below 1 precision counts more
    #: (SWE-grep: 0.5), above 1 recall does.
    beta: float = 1.0

    def __post_init__(self) -> None:
        if not 1 <= self.max_turns <= 64:
            raise ValueError(f"max_turns must be 1 to 64, got {self.max_turns}")
        if not 1 <= self.max_parallel <= 64:
            raise ValueError(f"max_parallel must be 1 to 64, got {self.max_parallel}")
        if self.free_turns < 0 or self.free_calls < 0:
            raise ValueError("the free budget cannot be negative")
        if not 0 < self.timeout_s <= 600:
            raise ValueError(f"timeout_s must be in (0, 600], got {self.timeout_s}")
        if self.max_findings < 1:
            raise ValueError(f"max_findings must be >= 1, got {self.max_findings}")
        if not 0.01 <= self.beta <= 100:  # also refuses NaN; beyond this range F-beta is P or R
            raise ValueError(f"beta must be 0.01 to 100, got {self.beta}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> GymSettings:
        """The settings `to_dict` wrote (an episode's stored ones); a key it does not know is
        ignored, one it lacks takes the default."""
        known = {f.name for f in fields(GymSettings)} - {"weights"}
        weights = data.get("weights") or {}
        names = {f.name for f in fields(RewardWeights)}
        return GymSettings(
            **{k: v for k, v in data.items() if k in known},
            weights=RewardWeights(**{k: v for k, v in weights.items() if k in names}),
        )


DEFAULT_SETTINGS: Final = GymSettings()
