"""Rollouts on a Ray cluster: each task's K episodes are one Ray task; choosing and storing stay in
the driver (`gym.rollout.rollouts` with `player=play_on_ray(...)`).

A policy holds what cannot travel (a chat policy's HTTP client and lock), so a Ray task gets a
recipe instead, `make_policy` (a picklable callable: `ReferencePolicy` itself, a `partial` of
`ReplayPolicy`, `openai_policy`), and builds its own. vLLM in-process is not offered on Ray: each
task would load the model anew; serve it (`vllm serve`) and play with `openai` against its URL.

Every node needs this package and the corpora (docs/scaling.md): a task carries its corpus root,
and a node where that directory does not exist finds the corpus by name. Ray is an optional extra,
imported only when this path is used.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

from codesearch_core.corpora import corpus_root
from codesearch_core.engines import OpenAIEngine, OpenAISettings, SamplingSettings
from codesearch_core.gym.chat import ChatPolicy, OpenAIChat
from codesearch_core.gym.episode import EpisodeResult
from codesearch_core.gym.evaluate import play
from codesearch_core.gym.policies import Policy
from codesearch_core.gym.rollout import Player
from codesearch_core.gym.settings import DEFAULT_SETTINGS, GymSettings
from codesearch_core.gym.tasks import Task
from codesearch_core.verify import cluster_cpus, connect_ray, import_ray, submit_lazily

PolicyRecipe = Callable[[], Policy]


def openai_policy(settings: OpenAISettings, sampling: SamplingSettings) -> ChatPolicy:
    """The chat policy of an OpenAI-compatible server, built where it plays (`partial` it into a
    recipe)."""
    return ChatPolicy(OpenAIChat(OpenAIEngine(settings), sampling))


def play_task(
    make_policy: PolicyRecipe, task: Task, k: int, settings: GymSettings
) -> tuple[Task, list[EpisodeResult]]:
    """One task's K episodes, on whichever node runs it (the body of its Ray task)."""
    if not task.corpus_root.is_dir():
        # The driver's path is not this node's: the same corpus is found here by name.
        task = replace(task, corpus_root=corpus_root(task.blueprint.corpus))
    policy = make_policy()
    try:
        return task, [play(policy, task, settings) for _ in range(k)]
    finally:
        close = getattr(policy, "close", None)
        if close is not None:
            close()  # a chat backend's connections


def play_on_ray(
    make_policy: PolicyRecipe,
    *,
    address: str | None = None,
    settings: GymSettings = DEFAULT_SETTINGS,
    max_in_flight: int | None = None,
) -> Player:
    """A `Player` whose tasks are Ray tasks (one CPU each; at most `max_in_flight`, default two per
    CPU of the cluster, outstanding). `address` as `verify_many_ray`'s: None is `$RAY_ADDRESS` or
    a new local Ray, `auto`, `ray://HEAD:10001`. It connects when called (a bad address is a
    CodesearchError before any episode), and disconnects at the end if it connected."""
    ray = import_ray()

    def player(
        tasks: Sequence[Task], k: int, stop: threading.Event | None
    ) -> Iterator[tuple[Task, list[EpisodeResult]]]:
        started_here = connect_ray(ray, address)
        try:
            remote = ray.remote(num_cpus=1, max_retries=1)(play_task)
            recipe = ray.put(make_policy)  # once, not once per task (a replay's recorded episodes)

            def submit(task: Task) -> object:
                return remote.remote(recipe, task, k, settings)

            results = submit_lazily(
                ray,
                submit,
                iter(tasks),
                max_in_flight=max_in_flight or 2 * cluster_cpus(ray),
                should_stop=None if stop is None else stop.is_set,
            )
            try:
                yield from results
            finally:
                results.close()
        finally:
            if started_here:
                ray.shutdown()

    return player
