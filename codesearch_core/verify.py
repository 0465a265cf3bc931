"""Verification at scale: execute and grade many proposals across processes, and store the results.

`verify_one` is the unit of work: a pure function from plain, picklable data (`VerifyTask`) to plain
data (`VerifyOutcome`), so the same function runs inline, in a local process pool (`verify_many`) or
as Ray tasks (`verify_ray.verify_many_ray`). The work is mostly tool subprocesses and parsing, so
processes (not threads) give a near-linear speed-up.

`verify_pending` drives a store: it pulls pending proposals lazily, runs them, and writes the
results in small batches (one transaction each) as they arrive, so a crash loses only the batch not
yet written and a re-run carries on where the last one stopped.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import suppress
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

from codesearch_core.corpus import corpus_root
from codesearch_core.errors import ErrorKind, ToolCallError
from codesearch_core.grader import grade, reward
from codesearch_core.models import Grade, Reward, RunResult, Span, ToolCall
from codesearch_core.runner import DEFAULT_MAX_FINDINGS, DEFAULT_TIMEOUT_S, run_tool_call
from codesearch_core.schemas import parse_tool_call
from codesearch_core.store_types import PendingExecution

if TYPE_CHECKING:
    # Workers import this module; they never touch the store, so they skip DuckDB and pandas.
    from codesearch_core.store import Store

#: Tasks per inter-process message: large enough to amortize pickling, small enough to balance load.
DEFAULT_CHUNK_SIZE: Final = 8
DEFAULT_BATCH_SIZE: Final = 256
#: Outcomes per store transaction, and the longest an outcome waits to be written. A commit costs
#: ~20-40 ms whatever it holds, so writing one outcome per transaction capped the whole command at
#: ~45 outcomes/s; a batch of 64 costs well under 1 ms per outcome.
DEFAULT_WRITE_BATCH: Final = 64
DEFAULT_WRITE_INTERVAL_S: Final = 0.25


@dataclass(frozen=True, slots=True)
class VerifyTask:
    """One proposal to execute and grade, as plain data that crosses process and machine boundaries.

    `call_json` is the proposal's call as canonical JSON, or None for a proposal without a valid call
    (it is graded with R_parse = 0 and nothing is run). `corpus_root` is resolved by the caller; a
    worker on a machine where that directory does not exist resolves `corpus` by name instead.
    """

    proposal_id: str
    call_json: str | None
    corpus: str
    corpus_root: str
    expected: tuple[Span, ...]
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_findings: int = DEFAULT_MAX_FINDINGS
    invalid_reason: str = ""


@dataclass(frozen=True, slots=True)
class VerifyOutcome:
    """What verifying one proposal produced: the execution, its grade and its reward.

    `grade` is None when the run did not complete (invalid call, tool error, timeout).
    """

    proposal_id: str
    run: RunResult
    grade: Grade | None
    reward: Reward

    @property
    def ok(self) -> bool:
        return self.run.ok


@dataclass(frozen=True, slots=True)
class VerifyProgress:
    """Running totals, reported after each outcome."""

    done: int
    errors: int
    elapsed_s: float
    total: int | None = None

    @property
    def calls_per_s(self) -> float:
        return self.done / self.elapsed_s if self.elapsed_s > 0 else 0.0


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The summary of a verification run."""

    count: int
    ok: int
    errors: int
    invalid: int
    timeouts: int
    mean_f1: float
    elapsed_s: float
    error_kinds: Mapping[str, int] = field(default_factory=dict)
    stopped: bool = False

    @property
    def calls_per_s(self) -> float:
        return self.count / self.elapsed_s if self.elapsed_s > 0 else 0.0


ProgressCallback = Callable[[VerifyProgress], None]
StopCheck = Callable[[], bool]


class OutcomeStream(Protocol):
    """Anything that turns tasks into outcomes: `verify_many`, or `verify_many_ray` bound to a cluster."""

    def __call__(self, tasks: Iterable[VerifyTask], /) -> Iterator[VerifyOutcome]: ...


# --- the unit of work ---------------------------------------------------------------------------


def _invalid_run(reason: str) -> RunResult:
    return RunResult(
        ok=False,
        findings=(),
        error_kind=ErrorKind.INVALID_CALL,
        error=reason or "the proposal has no valid tool call",
    )


def _resolve_root(task: VerifyTask) -> Path:
    root = Path(task.corpus_root)
    if root.is_dir():
        return root
    # On a cluster node the driver's path may not exist; the same corpus is found there by name.
    return corpus_root(task.corpus)


def verify_one(task: VerifyTask) -> VerifyOutcome:
    """Execute one proposal's call, grade its findings against the expected spans, compute the reward.

    Bad calls, tool errors and timeouts are recorded in the outcome's run, never raised. Only a run
    that completed is graded: a failed run's findings are not trustworthy, and grading "nothing
    found" against a blueprint that expects nothing would call a timeout perfect. A corpus missing
    on this machine raises CorpusError: that is the set-up's fault, not the proposal's.
    """
    call: ToolCall | None = None
    if task.call_json is None:
        run = _invalid_run(task.invalid_reason)
    else:
        try:
            call = parse_tool_call(json.loads(task.call_json))
        except (ToolCallError, ValueError) as err:
            run = _invalid_run(f"the stored call does not validate: {err}")
        else:
            run = run_tool_call(
                call,
                _resolve_root(task),
                timeout_s=task.timeout_s,
                max_findings=task.max_findings,
            )
    g = grade(run.findings, task.expected) if run.ok else None
    return VerifyOutcome(task.proposal_id, run, g, reward(g, call, run))


def verify_chunk(tasks: Sequence[VerifyTask]) -> list[VerifyOutcome]:
    """Verify several tasks in one worker call (one message each way instead of one per task)."""
    return [verify_one(t) for t in tasks]


# --- many tasks, many processes -----------------------------------------------------------------


class ProgressTracker:
    """Counts outcomes as they are yielded and reports each step to an optional callback."""

    def __init__(self, on_progress: ProgressCallback | None, total: int | None) -> None:
        self.on_progress = on_progress
        self.total = total
        self.started = time.perf_counter()
        self.done = 0
        self.errors = 0

    def add(self, outcome: VerifyOutcome) -> None:
        self.done += 1
        self.errors += not outcome.run.ok
        if self.on_progress is not None:
            elapsed = time.perf_counter() - self.started
            self.on_progress(VerifyProgress(self.done, self.errors, elapsed, self.total))


def default_workers() -> int:
    """The cores this process may run on (a container's or taskset's limit, not the machine's)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def default_start_method() -> str:
    """`fork` where the platform forks safely (Linux), else the platform's default.

    fork starts a worker in milliseconds with everything already imported. forkserver and spawn
    re-import the main script in every worker, and the CLI's imports (pandas, DuckDB) made the first
    result take seconds (3 to 13 s on a busy 2-core machine, against 0.03 s). The usual objection to
    fork, locks held by the parent's other threads (DuckDB's pool, a web server's), does not bite
    here: a worker only runs `verify_chunk` (parsing, subprocesses, numpy), never the parent's
    DuckDB or UI code, and exits with `os._exit`, so no inherited destructor runs in it.
    """
    platform: str = sys.platform  # a plain str, so the type checker checks both branches
    if platform == "linux":
        return "fork"
    return multiprocessing.get_start_method(allow_none=False)


def _ignore_interrupts() -> None:
    # Ctrl-C reaches the whole process group. The parent stops the run and keeps what was written;
    # workers just finish their chunk instead of each printing a KeyboardInterrupt traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _chunk_size_for(tasks: Iterable[VerifyTask], workers: int, chunk_size: int) -> int:
    if isinstance(tasks, Sequence):
        # A short list is split evenly so every worker gets a share, not one worker all of it.
        return max(1, min(chunk_size, math.ceil(len(tasks) / (workers * 4))))
    return chunk_size


def chunked(tasks: Iterable[VerifyTask], size: int) -> Iterator[list[VerifyTask]]:
    """Consecutive lists of up to `size` tasks, pulled lazily from `tasks`."""
    it = iter(tasks)
    while chunk := list(islice(it, size)):
        yield chunk


def verify_many(
    tasks: Iterable[VerifyTask],
    *,
    workers: int | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    on_progress: ProgressCallback | None = None,
    should_stop: StopCheck | None = None,
    start_method: str | None = None,
) -> Iterator[VerifyOutcome]:
    """Verify `tasks` in a pool of `workers` processes (default: all cores; 1 runs inline).

    Outcomes come in completion order, as soon as each chunk is done. Tasks are pulled from the
    iterable lazily and at most two chunks per worker are in flight, so a huge or lazily computed
    stream of tasks never sits in memory. When `should_stop()` turns true no new work starts; work
    already running is finished and yielded, so none of it is lost. `start_method` is the
    multiprocessing start method (default: `default_start_method()`).
    """
    n_workers = default_workers() if workers is None else workers
    if n_workers < 1:
        raise ValueError(f"workers must be at least 1, got {n_workers}")
    total = len(tasks) if isinstance(tasks, Sequence) else None
    tracker = ProgressTracker(on_progress, total)
    if n_workers == 1:
        for task in tasks:
            if should_stop is not None and should_stop():
                return
            outcome = verify_one(task)
            tracker.add(outcome)
            yield outcome
        return

    chunks = chunked(tasks, _chunk_size_for(tasks, n_workers, chunk_size))
    context = multiprocessing.get_context(start_method or default_start_method())
    with ProcessPoolExecutor(
        max_workers=n_workers, mp_context=context, initializer=_ignore_interrupts
    ) as pool:
        in_flight: set[Future[list[VerifyOutcome]]] = set()
        exhausted = False
        try:
            while True:
                while not exhausted and len(in_flight) < 2 * n_workers:
                    if should_stop is not None and should_stop():
                        exhausted = True
                        break
                    chunk = next(chunks, None)
                    if chunk is None:
                        exhausted = True
                        break
                    in_flight.add(pool.submit(verify_chunk, chunk))
                if not in_flight:
                    return
                done, pending = wait(in_flight, return_when=FIRST_COMPLETED)
                in_flight = set(pending)
                for future in done:
                    for outcome in future.result():
                        tracker.add(outcome)
                        yield outcome
        finally:
            for future in in_flight:
                future.cancel()


# --- the store ----------------------------------------------------------------------------------


class _Summary:
    def __init__(self) -> None:
        self.count = 0
        self.ok = 0
        self.invalid = 0
        self.timeouts = 0
        self.f1_sum = 0.0
        self.kinds: Counter[str] = Counter()

    def add(self, outcome: VerifyOutcome) -> None:
        self.count += 1
        if outcome.grade is not None:
            self.f1_sum += outcome.grade.span_f1
        kind = outcome.run.error_kind
        if kind is None:
            self.ok += 1
            return
        self.kinds[kind.value] += 1
        self.invalid += kind is ErrorKind.INVALID_CALL
        self.timeouts += kind is ErrorKind.TIMEOUT

    def report(self, elapsed_s: float, stopped: bool) -> VerifyReport:
        return VerifyReport(
            count=self.count,
            ok=self.ok,
            errors=self.count - self.ok,
            invalid=self.invalid,
            timeouts=self.timeouts,
            mean_f1=self.f1_sum / self.count if self.count else 0.0,
            elapsed_s=elapsed_s,
            error_kinds=dict(sorted(self.kinds.items())),
            stopped=stopped,
        )


def summarize(outcomes: Iterable[VerifyOutcome], elapsed_s: float = 0.0) -> VerifyReport:
    """A report over outcomes already computed (a benchmark's, a test's)."""
    summary = _Summary()
    for outcome in outcomes:
        summary.add(outcome)
    return summary.report(elapsed_s, stopped=False)


class _CorpusRoots:
    """Corpus name -> root, resolved once per run; an unknown corpus raises CorpusError."""

    def __init__(self) -> None:
        self._roots: dict[str, str] = {}

    def __call__(self, name: str) -> str:
        if name not in self._roots:
            self._roots[name] = str(corpus_root(name))
        return self._roots[name]


def task_for(
    pending: PendingExecution,
    root: str,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_findings: int = DEFAULT_MAX_FINDINGS,
) -> VerifyTask:
    """The task that verifies one pending proposal of the store against corpus root `root`."""
    return VerifyTask(
        proposal_id=pending.proposal_id,
        call_json=pending.call_json,
        corpus=pending.blueprint.corpus,
        corpus_root=root,
        expected=pending.blueprint.expected,
        timeout_s=timeout_s,
        max_findings=max_findings,
        invalid_reason=pending.invalid_reason,
    )


def verify_pending(
    store: Store,
    *,
    workers: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    limit: int | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_findings: int = DEFAULT_MAX_FINDINGS,
    on_progress: ProgressCallback | None = None,
    should_stop: StopCheck | None = None,
    execute: OutcomeStream | None = None,
    write_batch: int = DEFAULT_WRITE_BATCH,
    write_interval_s: float = DEFAULT_WRITE_INTERVAL_S,
) -> VerifyReport:
    """Execute and grade every proposal of `store` that has no execution yet (at most `limit`).

    Proposals are read `batch_size` at a time as the workers need them. Outcomes are written in
    batches, one transaction each, as soon as `write_batch` of them have arrived or the oldest
    unwritten one is `write_interval_s` old (checked when an outcome arrives), and at the end. An
    interruption (Ctrl-C, a stop request) writes what has arrived; a crash loses only the batch
    not yet written. Running again verifies exactly what is still pending (already verified: a
    no-op). Invalid proposals are recorded with R_parse = 0 and no run. `execute` replaces the
    local process pool (`verify_many` with `workers`), e.g. with `verify_many_ray` bound to a
    cluster address.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if write_batch < 1:
        raise ValueError(f"write_batch must be at least 1, got {write_batch}")
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be at least 0, got {limit}")
    roots = _CorpusRoots()
    in_flight: set[str] = set()
    yielded: set[str] = set()
    stopped = False

    def stop_requested() -> bool:
        nonlocal stopped
        stopped = stopped or (should_stop is not None and should_stop())
        return stopped

    def pending_tasks() -> Iterator[VerifyTask]:
        while limit is None or len(yielded) < limit:
            want = batch_size if limit is None else min(batch_size, limit - len(yielded))
            # Proposals still running are pending in the store too: ask for enough to skip them.
            rows = store.pending_verification(want + len(in_flight), include_invalid=True)
            fresh = [r for r in rows if r.proposal_id not in yielded][:want]
            if not fresh:
                return
            for row in fresh:
                if stop_requested():
                    return
                yielded.add(row.proposal_id)
                in_flight.add(row.proposal_id)
                yield task_for(
                    row,
                    roots(row.blueprint.corpus),
                    timeout_s=timeout_s,
                    max_findings=max_findings,
                )

    counts = store.counts()
    total = max(0, counts.proposals - counts.executed)
    summary = _Summary()
    started = time.perf_counter()
    tracker = ProgressTracker(on_progress, total if limit is None else min(total, limit))
    unwritten: list[VerifyOutcome] = []
    oldest_unwritten = 0.0

    def write_unwritten() -> None:
        if not unwritten:
            return
        store.record_executions_and_grades(
            [(o.proposal_id, o.run, o.grade, o.reward) for o in unwritten]
        )
        # Emptied before counting: a Ctrl-C while the progress is drawn must not write (and
        # count) the same batch twice. Counted once stored, so progress is what a crash keeps.
        written = unwritten[:]
        unwritten.clear()
        for o in written:
            in_flight.discard(o.proposal_id)
            summary.add(o)
            tracker.add(o)

    # A stop request ends the stream of tasks, so work already started is still written.
    stream = (execute or partial(verify_many, workers=workers))(pending_tasks())
    try:
        for outcome in stream:
            if not unwritten:
                oldest_unwritten = time.perf_counter()
            unwritten.append(outcome)
            if (
                len(unwritten) >= write_batch
                or time.perf_counter() - oldest_unwritten >= write_interval_s
            ):
                write_unwritten()
        write_unwritten()
    except BaseException:
        # Whatever stopped the run (Ctrl-C, a corpus missing for a later task), keep what arrived
        # before it. If that write fails too, the error that stopped the run is the one to report.
        with suppress(Exception):
            write_unwritten()
        raise
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
    return summary.report(time.perf_counter() - started, stopped)
