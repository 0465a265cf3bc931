"""Running an exported call again at export time: the tool output that formats with an
observation turn carry, and the graded reward that ranks preference pairs.

Stored runs are not read back: a reference call and a counter-call have none, and running the
call on the corpus as it is now is what makes the observation true of the file the trainer gets.
Runs are cached by (call, corpus) for the length of one export, so a call exported in several
rows (or one repeated by many proposals) runs once. A data set build hands over the runs of its
verify stage, made minutes before on the same pinned corpus: running every call again cost its
export as much as its verification.
"""

from __future__ import annotations

import json
import os
import threading
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypeVar

from codesearch_core import config
from codesearch_core.corpora import corpus_root
from codesearch_core.errors import CodesearchError
from codesearch_core.grading import score
from codesearch_core.models import Grade, RunResult, Span, ToolCall
from codesearch_core.tools import parse_tool_call, run_tool_call


@dataclass(frozen=True, slots=True)
class Observed:
    """One call run on its corpus and graded against its blueprint's expected spans."""

    run: RunResult
    grade: Grade | None
    reward: float


class Observer:
    """Runs calls on their corpora, once per (call, corpus) in one export."""

    def __init__(self, runs: Iterable[tuple[ToolCall, str, RunResult]] = ()) -> None:
        """`runs`: (call, corpus, run) of calls already run on their corpus as it is now."""
        self._runs: dict[tuple[str, str], RunResult] = {
            (call.to_json(), corpus): run for call, corpus, run in runs
        }
        self._roots: dict[str, Path] = {}
        self._lock = threading.Lock()  # the observing exports run calls on a few threads
        self.runs = 0

    def _root(self, corpus: str) -> Path:
        root = self._roots.get(corpus)
        if root is None:
            try:
                root = corpus_root(corpus)
            except CodesearchError:
                root = config.corpora_dir() / corpus
            self._roots[corpus] = root
        return root

    def run(self, call: ToolCall, corpus: str) -> RunResult:
        """The call's run, cached (two threads asking for one call at once may both run it)."""
        key = (call.to_json(), corpus)
        found = self._runs.get(key)
        if found is not None:
            return found
        run = run_tool_call(call, self._root(corpus))
        with self._lock:
            if key not in self._runs:
                self.runs += 1
                self._runs[key] = run
            return self._runs[key]

    def observe(self, call_json: str, corpus: str, expected: Sequence[Span]) -> Observed:
        call = parse_tool_call(json.loads(call_json))
        run = self.run(call, corpus)
        grade, reward = score(run, call, expected)
        return Observed(run, grade, reward.total)


#: How many calls an export runs ahead of the record it writes.
OBSERVE_AHEAD: Final = 32

T = TypeVar("T")


def observed_ahead(
    items: Iterable[tuple[T, str, str, Sequence[Span]]], observer: Observer
) -> Iterator[tuple[T, Observed]]:
    """Each item with its call (JSON, corpus, expected spans) run, in order. The runs overlap on
    a few threads (each is a child process), `OBSERVE_AHEAD` items ahead; the items are read from
    this thread only (a store's cursor is not shared). A stopped export (Ctrl-C, a closed stream)
    does not wait for the runs queued ahead."""
    pending: deque[tuple[T, Future[Observed]]] = deque()
    pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2)
    try:
        for item, call_json, corpus, expected in items:
            pending.append((item, pool.submit(observer.observe, call_json, corpus, expected)))
            if len(pending) >= OBSERVE_AHEAD:
                done, job = pending.popleft()
                yield done, job.result()
        while pending:
            done, job = pending.popleft()
            yield done, job.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
