"""Many tasks, many processes: `verify_many` streams outcomes from a local process pool.

The work is mostly tool subprocesses and parsing, so processes (not threads) give a near-linear
speed-up. `summarize` folds outcomes into the run's report.
"""

from __future__ import annotations

import math
import multiprocessing
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from itertools import islice
from typing import Final, Protocol

from codesearch_core import config
from codesearch_core.errors import ErrorKind
from codesearch_core.verify.tasks import VerifyOutcome, VerifyTask, verify_chunk, verify_one

DEFAULT_CHUNK_SIZE: Final = 8


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
    #: Proposals left pending because their corpus is not on this machine, by corpus name.
    skipped: Mapping[str, int] = field(default_factory=dict)

    @property
    def calls_per_s(self) -> float:
        return self.count / self.elapsed_s if self.elapsed_s > 0 else 0.0


ProgressCallback = Callable[[VerifyProgress], None]
StopCheck = Callable[[], bool]


class OutcomeStream(Protocol):
    """Anything that turns tasks into outcomes: `verify_many`, or `verify_many_ray` bound to a cluster."""

    def __call__(self, tasks: Iterable[VerifyTask], /) -> Iterator[VerifyOutcome]: ...


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
    """All the cores this process may run on (`config.usable_cores`)."""
    return config.usable_cores()


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


class Summary:
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
    summary = Summary()
    for outcome in outcomes:
        summary.add(outcome)
    return summary.report(elapsed_s, stopped=False)
