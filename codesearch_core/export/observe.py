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

#: What an observation turn shows: a model trained on it learns what the tool returns, and a
#: search that matched 10,000 lines must not put 10,000 lines into one training row.
OBSERVATION_MAX_MATCHES: Final = 20
OBSERVATION_MAX_LINE: Final = 200
#: How many locations the closing answer names.
SUMMARY_MAX_LOCATIONS: Final = 10


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


def _clip(text: str, limit: int = OBSERVATION_MAX_LINE) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _location(path: str, start: int, end: int) -> str:
    return f"{path}:{start}" if start == end else f"{path}:{start}-{end}"


def observation_text(run: RunResult) -> str:
    """The tool's answer as the model sees it: one `path:line: text` line per match (the first
    line of a multi-line match), cut after `OBSERVATION_MAX_MATCHES` with a count of the rest."""
    if not run.ok:
        kind = run.error_kind.value if run.error_kind is not None else "error"
        return f"error ({kind}): {run.error}"
    if not run.findings:
        return "no matches"
    lines = []
    for finding in run.findings[:OBSERVATION_MAX_MATCHES]:
        first = finding.text.splitlines()[0] if finding.text else ""
        where = _location(finding.path, finding.start_line, finding.end_line)
        lines.append(f"{where}: {_clip(first.strip())}")
    rest = len(run.findings) - OBSERVATION_MAX_MATCHES
    if rest > 0:
        lines.append(f"... {rest} more matches")
    if run.truncated:
        lines.append("... (output truncated by the tool runner)")
    return "\n".join(lines)


def summary_text(run: RunResult) -> str:
    """The closing assistant turn after the observation: what the search found, by location.

    Matches are counted as the observation counts them, one per finding (ripgrep reports each
    match on a line, so a line can hold several); the locations named are distinct, and said how
    many when fewer than the matches, so that the row's two turns agree."""
    if not run.ok:
        return f"The search failed: {run.error}"
    spans = sorted({(f.path, f.start_line, f.end_line) for f in run.findings})
    if not spans:
        return "The search found no matches."
    files = len({path for path, _, _ in spans})
    shown = ", ".join(_location(*span) for span in spans[:SUMMARY_MAX_LOCATIONS])
    rest = len(spans) - SUMMARY_MAX_LOCATIONS
    more = f", and {rest} more" if rest > 0 else ""
    found = len(run.findings)
    matches = "match" if found == 1 else "matches"
    at = f" at {len(spans)} locations" if len(spans) < found else ""
    in_files = "file" if files == 1 else "files"
    return f"Found {found} {matches}{at} in {files} {in_files}: {shown}{more}."


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
