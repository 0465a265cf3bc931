"""verify_one / verify_many / verify_pending: real rg and ast-grep on the shipped corpora and seeds."""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from verify_support import (
    by_proposal,
    comparable,
    invalid_proposal,
    make_store,
    reference_proposal,
    seed_proposals,
    slow_blueprint,
    task_for,
    tasks_for,
    write_slow_corpus,
)

from codesearch_core.corpora.blueprints import load_seed_blueprints
from codesearch_core.errors import CorpusError, EngineError, ErrorKind
from codesearch_core.models import Blueprint, Proposal
from codesearch_core.store.core import Store
from codesearch_core.store.rows import proposal_id
from codesearch_core.verify.pending import verify_pending
from codesearch_core.verify.pool import VerifyProgress, summarize, verify_many
from codesearch_core.verify.tasks import VerifyOutcome, VerifyTask, verify_one


@pytest.fixture(scope="module")
def seeds() -> tuple[list[Blueprint], list[Proposal]]:
    return seed_proposals(mutations_per_blueprint=2)


@pytest.fixture(scope="module")
def sequential(seeds: tuple[list[Blueprint], list[Proposal]]) -> list[VerifyOutcome]:
    return list(verify_many(tasks_for(*seeds), workers=1))


def test_every_seed_reference_call_grades_perfect() -> None:
    # A plan seed's reference is a plan (`tests/corpora/test_seeds.py` runs those).
    blueprints = [bp for bp in load_seed_blueprints() if bp.plan is None]
    tasks = tasks_for(blueprints, [reference_proposal(bp) for bp in blueprints])
    outcomes = list(verify_many(tasks, workers=1))
    assert len(outcomes) == len(blueprints) >= 30
    for task, outcome in zip(tasks, outcomes, strict=True):
        assert outcome.proposal_id == task.proposal_id
        assert outcome.run.ok, (task.call_json, outcome.run.error)
        assert outcome.grade is not None and outcome.grade.span_f1 == 1.0, task.call_json
        assert outcome.reward.total == pytest.approx(1.0)


def test_mutations_include_failures_and_imperfect_grades(sequential: list[VerifyOutcome]) -> None:
    # Without wrong calls in the mix, "parallel equals sequential" would prove little.
    report = summarize(sequential)
    assert report.errors > 0
    assert any(o.grade is not None and o.grade.span_f1 < 1.0 for o in sequential)
    assert report.ok + report.errors == len(sequential)


def test_two_workers_give_the_sequential_outcomes(
    seeds: tuple[list[Blueprint], list[Proposal]], sequential: list[VerifyOutcome]
) -> None:
    parallel = list(verify_many(tasks_for(*seeds), workers=2, chunk_size=4))
    assert by_proposal(parallel) == by_proposal(sequential)


def test_outcomes_survive_pickling(sequential: list[VerifyOutcome]) -> None:
    for outcome in sequential[:20]:
        assert comparable(pickle.loads(pickle.dumps(outcome))) == comparable(outcome)


def test_invalid_proposal_is_graded_zero_without_running_anything() -> None:
    bp = load_seed_blueprints()[0]
    outcome = verify_one(task_for(invalid_proposal(bp), bp))
    assert outcome.run.error_kind is ErrorKind.INVALID_CALL
    assert outcome.run.argv == ()  # no tool was started
    assert "invalid JSON" in outcome.run.error
    assert outcome.grade is None
    assert outcome.reward.total == 0.0
    assert outcome.reward.components == {"R_parse": 0.0}


def test_a_stored_call_that_no_longer_validates_is_recorded_as_invalid() -> None:
    bp = load_seed_blueprints()[0]
    task = task_for(reference_proposal(bp), bp)
    broken = VerifyTask(
        proposal_id=task.proposal_id,
        call_json='{"name": "grep", "arguments": {"pattern": "x"}}',
        corpus=task.corpus,
        corpus_root=task.corpus_root,
        expected=task.expected,
    )
    outcome = verify_one(broken)
    assert outcome.run.error_kind is ErrorKind.INVALID_CALL
    assert "name" in outcome.run.error
    assert outcome.reward.components["R_parse"] == 0.0


def test_catastrophic_backtracking_is_recorded_as_a_timeout(tmp_path: Path) -> None:
    root = write_slow_corpus(tmp_path / "slow")
    bp = slow_blueprint("slow")
    proposal = reference_proposal(bp)
    task = VerifyTask(
        proposal_id=proposal_id(proposal),
        call_json=bp.reference_call.to_json(),
        corpus="slow",
        corpus_root=str(root),
        expected=bp.expected,
        timeout_s=0.5,
    )
    (outcome,) = verify_many([task], workers=2)
    assert outcome.run.error_kind is ErrorKind.TIMEOUT
    assert not outcome.run.ok
    assert outcome.grade is None
    assert outcome.reward.components["R_find"] == 0.0


def test_a_missing_corpus_root_falls_back_to_the_corpus_name() -> None:
    # A Ray worker on another machine gets the driver's path, which need not exist there.
    bp = load_seed_blueprints()[0]
    task = task_for(reference_proposal(bp), bp)
    moved = VerifyTask(
        proposal_id=task.proposal_id,
        call_json=task.call_json,
        corpus=task.corpus,
        corpus_root="/nonexistent/driver/path",
        expected=task.expected,
    )
    assert comparable(verify_one(moved)) == comparable(verify_one(task))


def test_an_unknown_corpus_raises_instead_of_recording_a_result() -> None:
    bp = load_seed_blueprints()[0]
    task = task_for(reference_proposal(bp), bp)
    lost = VerifyTask(
        proposal_id=task.proposal_id,
        call_json=task.call_json,
        corpus="no-such-corpus",
        corpus_root="/nonexistent",
        expected=task.expected,
    )
    with pytest.raises(CorpusError, match="no-such-corpus"):
        verify_one(lost)


def test_verify_many_pulls_tasks_lazily(seeds: tuple[list[Blueprint], list[Proposal]]) -> None:
    tasks = tasks_for(*seeds)
    pulled = 0

    def stream() -> Iterator[VerifyTask]:
        nonlocal pulled
        for task in tasks:
            pulled += 1
            yield task

    outcomes = verify_many(stream(), workers=2, chunk_size=2)
    next(outcomes)
    # At most two chunks per worker in flight, plus the chunk being read.
    assert pulled <= 2 * 2 * 2 + 2 < len(tasks)
    rest = list(outcomes)
    assert pulled == len(tasks) == len(rest) + 1


def test_stop_request_ends_the_stream_early(seeds: tuple[list[Blueprint], list[Proposal]]) -> None:
    tasks = tasks_for(*seeds)
    seen: list[VerifyProgress] = []
    outcomes = list(
        verify_many(tasks, workers=1, on_progress=seen.append, should_stop=lambda: len(seen) >= 5)
    )
    assert len(outcomes) == 5
    assert [p.done for p in seen] == [1, 2, 3, 4, 5]
    assert seen[-1].total == len(tasks)


def test_progress_counts_every_outcome_and_error(sequential: list[VerifyOutcome]) -> None:
    report = summarize(sequential)
    assert report.count == len(sequential)
    assert report.errors == sum(not o.run.ok for o in sequential)
    assert sum(report.error_kinds.values()) == report.errors


def test_zero_workers_is_refused() -> None:
    with pytest.raises(ValueError, match="workers"):
        list(verify_many([], workers=0))


# --- the store ----------------------------------------------------------------------------------


def test_verify_pending_records_one_execution_and_grade_per_proposal(
    tmp_path: Path,
    seeds: tuple[list[Blueprint], list[Proposal]],
    sequential: list[VerifyOutcome],
) -> None:
    blueprints, proposals = seeds
    bad = invalid_proposal(blueprints[0])
    with make_store(tmp_path / "s.duckdb", blueprints, [*proposals, bad]) as store:
        report = verify_pending(store, workers=2, batch_size=16)
        assert report.count == len(proposals) + 1
        assert report.invalid == 1
        counts = store.counts()
        assert counts.executed == counts.proposals == len(proposals) + 1
        assert store.pending_verification(10, include_invalid=True) == []

        expected = by_proposal(sequential)
        for pid, want in expected.items():
            item = store.review_item(pid)
            assert item is not None and item.execution is not None and item.reward is not None
            assert item.execution.ok == want[0]
            assert item.execution.findings == want[2]
            assert item.grade == want[6]
            assert item.reward.total == pytest.approx(want[7])

        invalid = store.review_item(proposal_id(bad))
        assert invalid is not None and invalid.execution is not None
        assert invalid.execution.error_kind == ErrorKind.INVALID_CALL.value
        assert invalid.grade is None
        assert invalid.reward is not None and invalid.reward.components == {"R_parse": 0.0}


def test_verify_pending_again_is_a_no_op(
    tmp_path: Path, seeds: tuple[list[Blueprint], list[Proposal]]
) -> None:
    blueprints, proposals = seeds
    with make_store(tmp_path / "s.duckdb", blueprints, proposals[:20]) as store:
        verify_pending(store, workers=1)
        executed_at = {
            pid: item.execution.executed_at
            for pid in map(proposal_id, proposals[:20])
            if (item := store.review_item(pid)) is not None and item.execution is not None
        }
        again = verify_pending(store, workers=2)
        assert again.count == 0
        assert len(executed_at) == 20
        for pid, when in executed_at.items():
            item = store.review_item(pid)
            assert item is not None and item.execution is not None
            assert item.execution.executed_at == when


def test_an_interrupted_run_keeps_its_results_and_the_next_run_finishes(
    tmp_path: Path, seeds: tuple[list[Blueprint], list[Proposal]]
) -> None:
    blueprints, proposals = seeds
    with make_store(tmp_path / "s.duckdb", blueprints, proposals) as store:
        done: list[VerifyProgress] = []
        first = verify_pending(
            store,
            workers=2,
            batch_size=8,
            on_progress=done.append,
            should_stop=lambda: len(done) >= 10,
        )
        assert first.stopped
        assert 10 <= first.count < len(proposals)
        assert store.counts().executed == first.count  # every outcome that arrived was written

        second = verify_pending(store, workers=2, batch_size=8)
        assert not second.stopped
        assert first.count + second.count == len(proposals)
        assert store.counts().executed == len(proposals)


def test_limit_verifies_at_most_that_many(
    tmp_path: Path, seeds: tuple[list[Blueprint], list[Proposal]]
) -> None:
    blueprints, proposals = seeds
    with make_store(tmp_path / "s.duckdb", blueprints, proposals) as store:
        report = verify_pending(store, workers=2, batch_size=3, limit=7)
        assert report.count == 7
        assert store.counts().executed == 7


def test_a_timeout_in_the_store_is_recorded_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpora = tmp_path / "corpora"
    write_slow_corpus(corpora / "slow")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(corpora))
    bp = slow_blueprint("slow")
    slow = reference_proposal(bp)
    with make_store(tmp_path / "s.duckdb", [bp], [slow]) as store:
        report = verify_pending(store, workers=1, timeout_s=0.5)
        assert report.count == 1 and report.timeouts == 1
        item = store.review_item(proposal_id(slow))
        assert item is not None and item.execution is not None
        assert item.execution.error_kind == ErrorKind.TIMEOUT.value
        assert "0.5" in item.execution.error


def _watching(
    store: Store, seen: list[int], fail_after: int | None = None
) -> Callable[[Iterable[VerifyTask]], Iterator[VerifyOutcome]]:
    """A local, one-process outcome stream that notes how many results the store holds before
    yielding each outcome, and fails (as a lost worker would) after `fail_after` outcomes."""

    def execute(tasks: Iterable[VerifyTask]) -> Iterator[VerifyOutcome]:
        for n, outcome in enumerate(verify_many(tasks, workers=1)):
            if n == fail_after:
                raise EngineError("the worker pool broke")
            seen.append(store.counts().executed)
            yield outcome

    return execute


def test_outcomes_are_written_in_batches(
    tmp_path: Path, seeds: tuple[list[Blueprint], list[Proposal]]
) -> None:
    blueprints, proposals = seeds
    with make_store(tmp_path / "s.duckdb", blueprints, proposals[:10]) as store:
        seen: list[int] = []
        progress: list[int] = []
        report = verify_pending(
            store,
            execute=_watching(store, seen),
            write_batch=4,
            write_interval_s=3600,
            on_progress=lambda p: progress.append(p.done),
        )
        assert report.count == 10 and store.counts().executed == 10
        assert seen == [0, 0, 0, 0, 4, 4, 4, 4, 8, 8]
        assert progress == list(range(1, 11))  # each outcome counted once, when stored


def test_an_old_unwritten_outcome_is_written_with_the_next_one(
    tmp_path: Path, seeds: tuple[list[Blueprint], list[Proposal]]
) -> None:
    blueprints, proposals = seeds
    with make_store(tmp_path / "s.duckdb", blueprints, proposals[:5]) as store:
        seen: list[int] = []
        verify_pending(store, execute=_watching(store, seen), write_batch=64, write_interval_s=0)
        assert seen == [0, 1, 2, 3, 4]


def test_a_failing_run_keeps_the_outcomes_that_arrived_and_the_next_run_finishes(
    tmp_path: Path, seeds: tuple[list[Blueprint], list[Proposal]]
) -> None:
    blueprints, proposals = seeds
    with make_store(tmp_path / "s.duckdb", blueprints, proposals[:12]) as store:
        seen: list[int] = []
        with pytest.raises(EngineError, match="broke"):
            verify_pending(
                store,
                execute=_watching(store, seen, fail_after=6),
                write_batch=4,
                write_interval_s=3600,
            )
        assert store.counts().executed == 6
        assert store.check_caches() == []
        assert verify_pending(store, workers=2).count == 6
        assert store.counts().executed == 12


def test_a_write_batch_below_one_is_refused(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store, pytest.raises(ValueError, match="write_batch"):
        verify_pending(store, write_batch=0)


def test_editing_a_blueprints_expected_findings_regrades_its_proposals_only(
    tmp_path: Path, seeds: tuple[list[Blueprint], list[Proposal]]
) -> None:
    blueprints, proposals = seeds
    edited = next(bp for bp in blueprints if len(bp.expected) >= 2)
    reference = proposal_id(reference_proposal(edited))
    with make_store(tmp_path / "s.duckdb", blueprints, proposals) as store:
        verify_pending(store, workers=2)
        before = store.review_item(reference)
        assert before is not None and before.grade is not None
        assert before.grade.span_f1 == 1.0

        store.blueprints.upsert(replace(edited, expected=edited.expected[:1]))
        # The stored runs are graded again in the edit itself: nothing is pending, nothing re-runs.
        again = verify_pending(store, workers=2)

        assert again.count == 0
        after = store.review_item(reference)
        assert after is not None and after.grade is not None
        assert after.grade.n_expected == 1 and after.grade.span_precision < 1.0
        assert store.check_caches() == []


def test_a_run_without_its_tool_stops_verification_instead_of_being_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codesearch_core.errors import EnvironmentFault
    from codesearch_core.tools import binaries

    blueprints, proposals = seed_proposals(mutations_per_blueprint=1)
    store = make_store(tmp_path / "s.duckdb", blueprints[:3], proposals[:3])
    # The tool is gone on the machine that runs the calls (a custom `execute`, as Ray's, skips
    # the local check): the first outcome that says so stops the run.
    monkeypatch.setenv("CODESEARCH_RG", str(tmp_path / "not-installed"))
    monkeypatch.setenv("CODESEARCH_AST_GREP", str(tmp_path / "not-installed"))
    binaries.clear_caches()
    try:
        with pytest.raises(EnvironmentFault, match="not-installed"):
            verify_pending(store, execute=lambda tasks: verify_many(tasks, workers=1))
    finally:
        binaries.clear_caches()
    assert store.counts().executed == 0
    store.close()
