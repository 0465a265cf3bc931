"""Rejection sampling's choice, without torch: of the episodes a model played on each task, keep
those the gym verified (reward >= `min_reward`), best first and without duplicates (the same
calls in the same order), as `hf-agent` rows the SFT step trains on."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from codesearch_core.export import agent_conversation, episode_turns
from codesearch_core.gym import (
    DEFAULT_SETTINGS,
    EpisodeResult,
    GymSettings,
    Task,
    gym_tools,
    prompt_messages,
)


@dataclass
class RolloutTally:
    """What the rollouts gave: played, kept, and why the rest were not kept."""

    tasks: int = 0
    played: int = 0
    kept: int = 0
    below_min_reward: int = 0
    duplicates: int = 0
    no_call: int = 0
    solved_tasks: int = 0
    end_reasons: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def line(self, min_reward: float) -> str:
        return (
            f"{self.kept} episode(s) kept of {self.played} played on {self.tasks} task(s) "
            f"(reward >= {min_reward}: {self.solved_tasks} task(s) solved; "
            f"{self.below_min_reward} below, {self.duplicates} duplicate(s), "
            f"{self.no_call} without a call)"
        )


def _calls_key(result: EpisodeResult) -> str:
    turns = [[o.call.to_dict() for o in turn] for turn in result.turns]
    return json.dumps(turns, sort_keys=True)


def verified_rows(
    played: Iterable[tuple[Task, Sequence[EpisodeResult]]],
    min_reward: float,
    settings: GymSettings = DEFAULT_SETTINGS,
) -> tuple[list[dict[str, Any]], RolloutTally]:
    """The kept episodes of every task as `hf-agent` rows, and the tally."""
    rows: list[dict[str, Any]] = []
    tally = RolloutTally()
    tools = gym_tools()
    for task, results in played:
        tally.tasks += 1
        tally.played += len(results)
        for r in results:
            tally.end_reasons[str(r.end_reason)] = tally.end_reasons.get(str(r.end_reason), 0) + 1
        good = sorted(
            (r for r in results if r.reward >= min_reward),
            key=lambda r: (-r.reward, len(r.turns), r.calls),
        )
        tally.below_min_reward += len(results) - len(good)
        seen: set[str] = set()
        kept_here = 0
        for result in good:
            key = _calls_key(result)
            if key in seen:
                tally.duplicates += 1
                continue
            seen.add(key)
            turns = episode_turns(result.to_dict())
            if not turns:
                tally.no_call += 1
                continue
            opening = prompt_messages(task.blueprint, settings)
            rows.append(agent_conversation(turns, opening, tools))
            kept_here += 1
        tally.kept += kept_here
        tally.solved_tasks += kept_here > 0
    return rows, tally
