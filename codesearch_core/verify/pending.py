"""Verification of a store's pending proposals: `verify_pending` pulls them lazily, runs them and
writes the results in small batches (one transaction each) as they arrive, so a crash loses only the
batch not yet written and a re-run carries on where the last one stopped.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Final

from codesearch_core import config
from codesearch_core.corpora import corpus_root, current_snapshot
from codesearch_core.errors import ENVIRONMENT_ERROR_KINDS, CorpusError, EnvironmentFault
from codesearch_core.tools import DEFAULT_MAX_FINDINGS, DEFAULT_TIMEOUT_S, check_tools
from codesearch_core.verify.pool import (
    OutcomeStream,
    ProgressCallback,
    ProgressTracker,
    StopCheck,
    Summary,
    VerifyReport,
    verify_many,
)
from codesearch_core.verify.tasks import VerifyOutcome, VerifyTask

if TYPE_CHECKING:
    # Workers import the verify package; they never touch the store, so it stays a type-only
    # import and they skip DuckDB and pandas.
    from codesearch_core.store import PendingExecution, Store

DEFAULT_BATCH_SIZE: Final = config.VERIFY_BATCH_SIZE
#: Outcomes per store transaction, and the longest an outcome waits to be written. A commit costs
#: ~20-40 ms whatever it holds (more on a busy machine), so writing one outcome per transaction
#: capped the whole command at ~45 outcomes/s. The writes run in the process that also feeds the
#: workers, on the cores the tools need: batches of 256 (at most a second's work, what a crash
#: can lose) cost 0.4-0.8 ms per outcome where batches of 64, a quarter second apart, cost 1.8 ms
#: on a loaded 2-core machine.
DEFAULT_WRITE_BATCH: Final = 256
DEFAULT_WRITE_INTERVAL_S: Final = 1.0


class _CorpusRoots:
    """Corpus name -> root, resolved once per run; an unknown corpus raises CorpusError.

    Each corpus's snapshot is read once too, before its first task runs, and every outcome is
    stored as made on it: the store would otherwise walk the corpus for every batch it writes.
    Read before the runs, a snapshot edited mid-run leaves the runs stamped with the older
    snapshot, so `verify --stale` re-checks them (never the other way round).
    """

    def __init__(self) -> None:
        self._roots: dict[str, str] = {}
        self.snapshots: dict[str, str | None] = {}

    def __call__(self, name: str) -> str:
        if name not in self._roots:
            self._roots[name] = str(corpus_root(name))
            try:
                self.snapshots[name] = current_snapshot(name)
            except CorpusError:  # a folder the manifest check cannot read: stamped as unknown
                self.snapshots[name] = None
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
        corpus=pending.corpus,
        corpus_root=root,
        expected=pending.expected,
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
    no-op). Invalid proposals are recorded with R_parse = 0 and no run. A missing tool is an
    EnvironmentFault before the first run (or when a run reports one), never a recorded result,
    and a proposal whose corpus is absent stays pending (`skipped`). `execute` replaces the
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
    skipped: dict[str, str] = {}  # proposal id -> its corpus, missing on this machine
    yielded: set[str] = set()
    #: The blueprint key each task is graded against: an outcome whose blueprint was edited while
    #: it ran is not written (it stays pending for the next run).
    graded_against: dict[str, str] = {}
    stopped = False

    def stop_requested() -> bool:
        nonlocal stopped
        stopped = stopped or (should_stop is not None and should_stop())
        return stopped

    def pending_tasks() -> Iterator[VerifyTask]:
        while limit is None or len(yielded) < limit:
            want = batch_size if limit is None else min(batch_size, limit - len(yielded))
            # Proposals still running are pending in the store too: ask for enough to skip them.
            rows = store.pending_verification(
                want + len(in_flight) + len(skipped), include_invalid=True
            )
            fresh = [r for r in rows if r.proposal_id not in yielded][:want]
            if not fresh:
                return
            for row in fresh:
                if stop_requested():
                    return
                yielded.add(row.proposal_id)
                try:
                    root = roots(row.corpus)
                except CorpusError:
                    # Not this proposal's fault: it stays pending for a machine with the corpus,
                    # and the others are verified (the report names what was left).
                    skipped[row.proposal_id] = row.corpus
                    continue
                in_flight.add(row.proposal_id)
                if row.grading_key:
                    graded_against[row.proposal_id] = row.grading_key
                yield task_for(
                    row,
                    root,
                    timeout_s=timeout_s,
                    max_findings=max_findings,
                )

    counts = store.counts()
    total = max(0, counts.proposals - counts.executed)
    if total and execute is None:
        # Without a tool every run fails alike; recorded, those failures would be the proposals'.
        # (A custom `execute` runs elsewhere, with that machine's tools: its outcomes are checked.)
        check_tools()
    summary = Summary()
    started = time.perf_counter()
    tracker = ProgressTracker(on_progress, total if limit is None else min(total, limit))
    unwritten: list[VerifyOutcome] = []
    oldest_unwritten = 0.0

    def write_unwritten() -> None:
        if not unwritten:
            return
        stale = store.record_executions_and_grades(
            [(o.proposal_id, o.run, o.grade, o.reward) for o in unwritten],
            graded_against={
                o.proposal_id: graded_against[o.proposal_id]
                for o in unwritten
                if o.proposal_id in graded_against
            },
            snapshots=roots.snapshots,
        )
        # Emptied before counting: a Ctrl-C while the progress is drawn must not write (and
        # count) the same batch twice. Counted once stored, so progress is what a crash keeps.
        written = unwritten[:]
        unwritten.clear()
        for o in written:
            in_flight.discard(o.proposal_id)
            if o.proposal_id in stale:
                continue  # graded against a blueprint edited meanwhile: not written, still pending
            summary.add(o)
            tracker.add(o)

    # A stop request ends the stream of tasks, so work already started is still written.
    stream = (execute or partial(verify_many, workers=workers))(pending_tasks())
    try:
        for outcome in stream:
            if outcome.run.error_kind in ENVIRONMENT_ERROR_KINDS:
                # The machine failed, not the call: the proposal stays pending, the run stops.
                raise EnvironmentFault(
                    f"{outcome.run.error} (verification stopped; the results before it are kept)"
                )
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
        # Whatever stopped the run (Ctrl-C, a store error), keep what arrived
        # before it. If that write fails too, the error that stopped the run is the one to report.
        with suppress(Exception):
            write_unwritten()
        raise
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
    report = summary.report(time.perf_counter() - started, stopped)
    return replace(report, skipped=dict(sorted(Counter(skipped.values()).items())))
