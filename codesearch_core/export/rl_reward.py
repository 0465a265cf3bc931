"""The studio's graded reward as an RL reward function, in TRL's `GRPOTrainer` convention.

    reward = CodeSearchReward.from_seeds()
    trainer = GRPOTrainer(..., reward_funcs=reward, train_dataset=load_dataset("json", ...))

TRL calls `reward(prompts=..., completions=..., completion_ids=..., **columns)` with every other
column of the batch as a keyword list: the `hf-prompts` export carries `blueprint_id`, which names
the corpus to search and the expected spans to grade against. Each completion (the model's text,
or a conversational list of messages, possibly with parsed `tool_calls`) is read the way the
engines read model output (the tool format's markers, then the same repairs: aliases, shapes, a
missing `pcre2`), executed with the real runner on the blueprint's corpus, and graded: the value is
the same reward the studio stores for a proposal (`grading.rewards`).

It never raises for anything a completion holds: a completion that is not a call, an unknown
blueprint, or any failure scores `PARSE_FAILURE_REWARD` (and is counted in `stats`), because an
exception in a reward function stops a training run hours in. A machine that cannot run calls is
the exception: the tools and the blueprints' corpora are checked when the reward is built
(`EnvironmentFault`, `ToolNotFoundError`, `CorpusError`), and a run that fails for the machine
(`ENVIRONMENT_ERROR_KINDS`: a tool gone mid-training) raises `EnvironmentFault` from the call
instead of scoring it: a policy rewarded for the machine's failures learns noise. It is thread-safe, and runs are cached by (call, corpus snapshot
id) (`corpora.snapshot`): GRPO samples the same call many times for one prompt, and a call is run
once (a second thread asking for a call that is running waits for that run instead of starting
another); a corpus whose bytes change gets a new snapshot id, so no run made on the old bytes is
reused. The snapshot id is checked again at most every `snapshot_ttl_s` seconds per corpus (a
check stats every file; a snapshot added with `codesearch corpus add` is read-only anyway).

A batch's completions are scored on a thread pool (`workers`, default four per CPU): the work is
the tool's child process, during which the thread waits without the GIL, so more threads than
cores keep both cores busy with tool runs (benchmarks/bench_reward.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final

from codesearch_core.corpora import (
    check_corpus,
    check_search_environment,
    corpus_root,
    load_seed_blueprints,
    read_blueprints_jsonl,
)
from codesearch_core.engines import DEFAULT_TOOL_FORMAT, get_tool_format, read_call
from codesearch_core.errors import ENVIRONMENT_ERROR_KINDS, CodesearchError, EnvironmentFault
from codesearch_core.grading import score
from codesearch_core.models import Blueprint, RunResult, ToolCall
from codesearch_core.store import Store
from codesearch_core.tools import DEFAULT_MAX_FINDINGS, DEFAULT_TIMEOUT_S, run_tool_call

#: What a completion that holds no valid call earns: `grading.rewards.reward` with no call.
PARSE_FAILURE_REWARD: Final = 0.0
#: Runs kept in the cache; the oldest go first beyond it.
DEFAULT_CACHE_SIZE: Final = 100_000
#: How long a corpus's snapshot id is trusted before its files are checked again.
DEFAULT_SNAPSHOT_TTL_S: Final = 30.0
#: Threads per CPU: each mostly waits for a tool's child process.
THREADS_PER_CPU: Final = 4

_RunKey = tuple[str, str]


class CodeSearchReward:
    """A TRL reward function: `(prompts, completions, **kwargs) -> list[float]`."""

    def __init__(
        self,
        blueprints: Iterable[Blueprint],
        *,
        tool_format: str = DEFAULT_TOOL_FORMAT,
        workers: int | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_findings: int = DEFAULT_MAX_FINDINGS,
        cache_size: int = DEFAULT_CACHE_SIZE,
        blueprint_column: str = "blueprint_id",
        snapshot_ttl_s: float = DEFAULT_SNAPSHOT_TTL_S,
    ) -> None:
        # TRL names each reward function's logged metric after `__name__`.
        self.__name__ = "codesearch_reward"
        self._blueprints = {bp.id: bp for bp in blueprints}
        # Before any training step: without a tool or a corpus every reward would be the same 0.
        check_search_environment(bp.corpus for bp in self._blueprints.values())
        self._format = get_tool_format(tool_format)
        self._timeout_s = timeout_s
        self._max_findings = max_findings
        self._cache_size = max(cache_size, 1)
        self._column = blueprint_column
        self._snapshot_ttl_s = snapshot_ttl_s
        self._roots: dict[str, Path] = {}
        #: corpus -> (snapshot id, or the root's path where there is none; when it was checked)
        self._snapshots: dict[str, tuple[str, float]] = {}
        self._runs: dict[_RunKey, Future[RunResult]] = {}
        self._lock = threading.Lock()
        self._snapshot_lock = threading.Lock()
        # Each run is a child process: threads overlap them without the GIL in the way.
        self._pool = ThreadPoolExecutor(
            max_workers=workers or THREADS_PER_CPU * (os.cpu_count() or 2),
            thread_name_prefix="codesearch-reward",
        )
        self.stats: dict[str, int] = {
            "completions": 0,
            "runs": 0,
            "cache_hits": 0,
            "parse_failures": 0,
            "unknown_blueprint": 0,
            "errors": 0,
        }

    @classmethod
    def from_seeds(cls, **options: Any) -> CodeSearchReward:
        """Over the shipped seed blueprints (the ids the `hf-prompts` export of a seeds store has)."""
        return cls(load_seed_blueprints(), **options)

    @classmethod
    def from_jsonl(cls, path: Path | str, **options: Any) -> CodeSearchReward:
        """Over a blueprint JSONL file (`codesearch` writes and imports this layout)."""
        blueprints, _ = read_blueprints_jsonl(Path(path))
        return cls(blueprints, **options)

    @classmethod
    def from_store(
        cls, store: Store, blueprint_ids: Iterable[str], **options: Any
    ) -> CodeSearchReward:
        """Over a store's blueprints, e.g. the `blueprint_id` column of its `hf-prompts` export."""
        return cls(store.blueprints.get_many(sorted(set(blueprint_ids))), **options)

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def __enter__(self) -> CodeSearchReward:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- the TRL entry point ---------------------------------------------------------------------

    def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[float]:
        """One reward per completion; `kwargs[blueprint_column]` holds each one's blueprint id."""
        try:
            items = list(completions or [])
        except Exception:
            return []
        try:
            ids = _column(kwargs.get(self._column), len(items))
            futures = [
                self._pool.submit(self._reward, text, bp_id)
                for text, bp_id in zip(items, ids, strict=True)
            ]
            return [self._result(f) for f in futures]
        except EnvironmentFault:
            raise
        except Exception:
            self._count("errors", len(items))
            return [PARSE_FAILURE_REWARD] * len(items)

    def reward(self, completion: Any, blueprint_id: str) -> float:
        """One completion's reward, in the calling thread."""
        return self._reward(completion, blueprint_id)

    # --- one completion --------------------------------------------------------------------------

    def _result(self, future: Future[float]) -> float:
        try:
            return future.result()
        except EnvironmentFault:
            raise
        except Exception:
            self._count("errors")
            return PARSE_FAILURE_REWARD

    def _count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self.stats[key] += n

    def _reward(self, completion: Any, blueprint_id: Any) -> float:
        self._count("completions")
        try:
            bp = self._blueprints.get(str(blueprint_id))
            if bp is None:
                self._count("unknown_blueprint")
                return PARSE_FAILURE_REWARD
            text, parsed_calls = _completion(completion)
            read = read_call(text, tool_format=self._format)
            if read.call is None:
                self._count("parse_failures")
                return PARSE_FAILURE_REWARD
            run = self._run(read.call, bp.corpus)
            # Only the first call runs; every other call the completion wrote costs effort.
            calls = max(read.calls, parsed_calls)
            return score(run, read.call, bp.expected, calls_made=calls)[1].total
        except EnvironmentFault:
            raise
        except Exception:
            self._count("errors")
            return PARSE_FAILURE_REWARD

    def _root(self, corpus: str) -> Path:
        root = self._roots.get(corpus)
        if root is None:
            root = corpus_root(corpus)
            self._roots[corpus] = root
        return root

    def _snapshot(self, corpus: str, root: Path) -> str:
        """The corpus's snapshot id as it is now (checked at most every `snapshot_ttl_s`); the
        root's path for a folder whose files cannot be listed (the run will say why)."""
        known = self._snapshots.get(corpus)
        if known is not None and time.monotonic() - known[1] < self._snapshot_ttl_s:
            return known[0]
        # One thread checks; the others wait for its answer rather than hash the corpus again
        # (an unpinned corpus is hashed whole the first time).
        with self._snapshot_lock:
            now = time.monotonic()
            known = self._snapshots.get(corpus)
            if known is not None and now - known[1] < self._snapshot_ttl_s:
                return known[0]
            try:
                snapshot = check_corpus(corpus).content_id
            except (CodesearchError, OSError):
                snapshot = f"path:{root}"
            self._snapshots[corpus] = (snapshot, now)
            return snapshot

    def _run(self, call: ToolCall, corpus: str) -> RunResult:
        root = self._root(corpus)
        key = (call.to_json(), self._snapshot(corpus, root))
        with self._lock:
            future = self._runs.get(key)
            owner = future is None
            if future is None:
                future = Future()
                self._runs[key] = future
                while len(self._runs) > self._cache_size:
                    del self._runs[next(iter(self._runs))]
                self.stats["runs"] += 1
            else:
                self.stats["cache_hits"] += 1
        if owner:
            try:
                run = run_tool_call(
                    call, root, timeout_s=self._timeout_s, max_findings=self._max_findings
                )
                if run.error_kind in ENVIRONMENT_ERROR_KINDS:
                    raise EnvironmentFault(f"{run.error} (a reward needs the tool calls to run)")
                future.set_result(run)
            except BaseException as err:
                with self._lock:
                    self._runs.pop(key, None)
                future.set_exception(err)
                raise
        return future.result()


def _column(values: Any, n: int) -> list[Any]:
    """A batch column as one value per completion (a single value applies to all)."""
    if isinstance(values, str) or not isinstance(values, Sequence):
        return [values] * n
    out = list(values)
    return out if len(out) == n else [None] * n


def completion_text(completion: Any) -> str:
    """The text to parse from one completion: a string as it is; from messages (TRL's
    conversational completions), the last assistant turn's first tool call when the trainer
    parsed them, else its content."""
    return _completion(completion)[0]


def _completion(completion: Any) -> tuple[str, int]:
    """`completion_text`, and how many tool calls the trainer parsed out of it (0: none)."""
    if isinstance(completion, str):
        return completion, 0
    message: Any = completion
    if isinstance(completion, Sequence) and completion:
        turns = [m for m in completion if isinstance(m, Mapping)]
        assistant = [m for m in turns if m.get("role", "assistant") == "assistant"]
        message = (assistant or turns)[-1] if turns else None
    if not isinstance(message, Mapping):
        return "", 0
    calls = message.get("tool_calls")
    if isinstance(calls, Sequence) and calls and isinstance(calls[0], Mapping):
        function = calls[0].get("function", calls[0])
        if isinstance(function, Mapping):
            arguments = function.get("arguments", {})
            if isinstance(arguments, str):
                with contextlib.suppress(ValueError):
                    arguments = json.loads(arguments)
            text = json.dumps({"name": function.get("name"), "arguments": arguments})
            return text, len(calls)
    content = message.get("content")
    return (content if isinstance(content, str) else ""), 0
