"""Sampling episodes to keep (rejection sampling for SFT / RFT): K episodes per task, the good
ones stored with their provenance.

For each task: K episodes of the policy (on a few threads); those with reward >= `min_reward`
are kept, best first (higher reward, then fewer turns, then fewer calls), without duplicates (the
same calls in the same order), and stored in one transaction per task, so a run stopped midway
(Ctrl-C) keeps every task it finished and none by halves. A task with episodes of this engine and
model stored already is skipped: a second run goes on where the first stopped.

Where the episodes are played is a `Player`: threads here (`play_here`, the default) or Ray tasks
(`gym.rollout_ray.play_on_ray`); choosing and storing is the same code for both.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Final

from codesearch_core import config
from codesearch_core.errors import InputFileError
from codesearch_core.gym.episode import EpisodeResult
from codesearch_core.gym.evaluate import play
from codesearch_core.gym.policies import Policy
from codesearch_core.gym.settings import DEFAULT_SETTINGS, SUCCESS_REWARD, GymSettings
from codesearch_core.gym.tasks import Task
from codesearch_core.store import Store, StoredEpisode, corpus_snapshot, episode_id_of
from codesearch_core.tools import tool_versions

DEFAULT_MIN_REWARD: Final = SUCCESS_REWARD
MAX_K: Final = 64
#: Kept episodes are stored in one transaction per this many, or per this many seconds.
FLUSH_EPISODES: Final = 256
FLUSH_S: Final = 1.0
ProgressFn = Callable[[int, int], None]
#: Plays K episodes of each task; yields each task with its K results as it finishes. Once the
#: event is set no new task starts; the ones playing finish and are yielded.
Player = Callable[
    [Sequence[Task], int, threading.Event | None], Iterator[tuple[Task, list[EpisodeResult]]]
]


@dataclass
class RolloutReport:
    tasks: int = 0
    skipped_stored: int = 0
    episodes: int = 0  # played
    kept: int = 0  # stored (new)
    below_min_reward: int = 0
    duplicates: int = 0
    stopped: bool = False
    #: Tasks that got no episode at or above the minimum reward.
    unsolved: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tasks": self.tasks,
            "skipped_stored": self.skipped_stored,
            "episodes": self.episodes,
            "kept": self.kept,
            "below_min_reward": self.below_min_reward,
            "duplicates": self.duplicates,
            "unsolved": len(self.unsolved),
            "stopped": self.stopped,
        }


def check_rollout_args(
    k: int, min_reward: float, *, k_name: str = "K", reward_name: str = "the minimum reward"
) -> None:
    """The run's K and minimum reward, checked before anything is played (`codesearch rollouts`
    names its flags, the Propose page its fields)."""
    if not 1 <= k <= MAX_K:
        raise InputFileError(f"{k_name} must be 1 to {MAX_K} (episodes per task), got {k}")
    if not -1.0 <= min_reward <= 1.0:
        raise InputFileError(f"{reward_name} must be in [-1, 1], got {min_reward}")


def choose(
    results: Sequence[EpisodeResult], min_reward: float
) -> tuple[list[EpisodeResult], int, int]:
    """(kept best first, how many fell below `min_reward`, how many were duplicates)."""
    good = [r for r in results if r.reward >= min_reward]
    good.sort(key=lambda r: (-r.reward, len(r.turns), r.calls))
    kept: list[EpisodeResult] = []
    seen: set[str] = set()
    for r in good:
        key = episode_id_of(r.blueprint_id, r.to_dict())
        if key not in seen:
            seen.add(key)
            kept.append(r)
    return kept, len(results) - len(good), len(good) - len(kept)


def stored_episode(
    result: EpisodeResult, *, corpus: str, engine: str, model: str, **provenance: Any
) -> StoredEpisode:
    """A finished episode as the store keeps it: its figures and trajectory, the engine and
    model that played it, and `provenance` (StoredEpisode's other fields: sampling, settings,
    snapshot, tool versions, what it corrects)."""
    return StoredEpisode(
        blueprint_id=result.blueprint_id,
        corpus=corpus,
        engine=engine,
        model=model,
        reward=result.reward,
        components=result.components,
        span_f1=result.grade.span_f1 if result.grade is not None else 0.0,
        turns=len(result.turns),
        calls=result.calls,
        invalid_calls=result.invalid_calls,
        end_reason=result.end_reason,
        trajectory=result.to_dict(),
        **provenance,
    )


def _stored(
    result: EpisodeResult,
    task: Task,
    policy: Policy,
    provenance: Mapping[str, Any],
) -> StoredEpisode:
    return stored_episode(
        result,
        corpus=task.blueprint.corpus,
        engine=policy.name,
        model=policy.model,
        sampling=provenance.get("sampling", {}),
        settings=provenance["settings"],
        snapshot=provenance["snapshots"].get(task.blueprint.corpus),
        tool_versions=provenance["tool_versions"],
    )


def play_here(
    policy: Policy, settings: GymSettings = DEFAULT_SETTINGS, workers: int | None = None
) -> Player:
    """A `Player` on this machine: one task's K episodes per thread, `workers` threads."""

    def player(
        tasks: Sequence[Task], k: int, stop: threading.Event | None
    ) -> Iterator[tuple[Task, list[EpisodeResult]]]:
        def one(task: Task) -> tuple[Task, list[EpisodeResult]]:
            return task, [play(policy, task, settings) for _ in range(k)]

        with ThreadPoolExecutor(max_workers=workers or 2 * config.usable_cores()) as pool:
            futures = [pool.submit(one, t) for t in tasks]
            for future in as_completed(futures):
                if future.cancelled():
                    continue
                yield future.result()
                if stop is not None and stop.is_set():
                    for f in futures:
                        f.cancel()  # those not started; the ones playing finish and are stored

    return player


def rollouts(
    policy: Policy,
    tasks: Sequence[Task],
    store: Store,
    *,
    k: int = 1,
    min_reward: float = DEFAULT_MIN_REWARD,
    settings: GymSettings = DEFAULT_SETTINGS,
    sampling: Mapping[str, Any] | None = None,
    workers: int | None = None,
    stop: threading.Event | None = None,
    on_progress: ProgressFn | None = None,
    player: Player | None = None,
) -> RolloutReport:
    """Play, choose and store (module docstring). `stop` set: no new task starts; the tasks
    playing finish and are stored. `player`: where the episodes are played (default `play_here`
    with `workers` threads); `policy` labels and stores them either way."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    report = RolloutReport(tasks=len(tasks))
    done_before = store.episodes.blueprints(policy.name, policy.model)
    todo = [t for t in tasks if t.blueprint.id not in done_before]
    report.skipped_stored = len(tasks) - len(todo)
    provenance = {
        "settings": settings.to_dict(),
        # A chat policy's own sampling when none is given; the reference and recorded policies
        # sample nothing.
        "sampling": dict(sampling if sampling is not None else getattr(policy, "sampling", {})),
        "tool_versions": tool_versions(),
        "snapshots": {c: corpus_snapshot(c) for c in {t.blueprint.corpus for t in todo}},
    }
    batch: list[StoredEpisode] = []
    flushed = time.monotonic()

    def flush() -> None:
        nonlocal flushed
        report.kept += store.episodes.save(batch)
        batch.clear()
        flushed = time.monotonic()

    play_all = player or play_here(policy, settings, workers)
    for done, (task, results) in enumerate(play_all(todo, k, stop), start=1):
        kept, below, duplicates = choose(results, min_reward)
        report.episodes += len(results)
        report.below_min_reward += below
        report.duplicates += duplicates
        if not kept:
            report.unsolved.append(task.blueprint.id)
        batch.extend(_stored(r, task, policy, provenance) for r in kept)
        if on_progress is not None:
            on_progress(done, len(todo))
        # One transaction per batch (a commit costs milliseconds, an episode far less); each
        # task's episodes are in one batch, so a stop never stores half of a task's.
        if len(batch) >= FLUSH_EPISODES or time.monotonic() - flushed >= FLUSH_S:
            flush()
    flush()
    report.stopped = stop is not None and stop.is_set()
    return report
