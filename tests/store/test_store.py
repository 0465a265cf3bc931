"""The store: blueprints, proposals, runs and grades, the decision log, the review queue, the dashboard."""

from __future__ import annotations

import os
import signal
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from store_helpers import (
    blueprint,
    finding,
    grade,
    invalid_proposal,
    proposal,
    reward,
    rg_call,
    run_failed,
    run_ok,
)

from codesearch_core.errors import InputFileError, StoreError
from codesearch_core.grading.rewards import reward as reward_for
from codesearch_core.grading.spans import grade as grade_findings
from codesearch_core.models import Blueprint, DecisionAction, RunResult, Span
from codesearch_core.store import PROPOSAL
from codesearch_core.store import writes as store_writes
from codesearch_core.store.core import Store
from codesearch_core.store.filters import QueueFilters
from codesearch_core.store.types import BlueprintFilters, DecisionState
from codesearch_core.tools.runner import run_tool_call


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store(tmp_path / "studio.duckdb")
    yield s
    s.close()


ANY = QueueFilters(decision=DecisionState.ANY)


# --- blueprints ------------------------------------------------------------------------------------


def test_a_blueprint_reads_back_equal(store: Store) -> None:
    bp = blueprint(1, tags=("structure", "adversarial:comments"))
    store.blueprints.add([bp])
    assert store.blueprints.get(bp.id) == bp
    assert store.blueprints.get("nope") is None


def test_adding_the_same_blueprints_again_adds_nothing(store: Store) -> None:
    first = store.blueprints.add([blueprint(1), blueprint(2)])
    again = store.blueprints.add([blueprint(1), blueprint(2)])
    assert (first.new, first.existing) == (2, 0)
    assert (again.new, again.existing) == (0, 2)
    assert store.counts().blueprints == 2


def test_same_content_under_another_id_is_stored_once(store: Store) -> None:
    bp = blueprint(1)
    report = store.blueprints.add([bp, replace(bp, id="bp-copy")])
    assert (report.new, report.existing) == (1, 1)
    assert report.ids == (bp.id, bp.id)


def test_an_id_stored_with_other_content_is_a_conflict_and_stores_nothing(store: Store) -> None:
    store.blueprints.add([blueprint(1)])
    changed = replace(blueprint(1), intent="Find something else entirely")
    with pytest.raises(InputFileError, match="already stored with a different"):
        store.blueprints.add([blueprint(2), changed])
    assert store.blueprints.get("bp-002") is None
    report = store.blueprints.add([blueprint(2), changed], skip_bad=True)
    assert (report.new, report.skipped) == (1, 1)


def test_upsert_edits_a_blueprint_and_keeps_every_revision(store: Store) -> None:
    bp = blueprint(1)
    assert store.blueprints.upsert(bp) == "created"
    assert store.blueprints.upsert(bp) == "unchanged"
    edited = replace(bp, expected=(Span("src/app.py", 9, 9),), notes="one more span")
    assert store.blueprints.upsert(edited) == "updated"
    assert store.blueprints.get(bp.id) == edited
    revisions = store.blueprints.revisions(bp.id)
    assert [r.revision for r in revisions] == [1, 2]
    assert revisions[0].data["expected"] == [{"path": "src/app.py", "start_line": 2, "end_line": 3}]
    assert revisions[1].data["notes"] == "one more span"


def _verified(store: Store, bp: Blueprint, *patterns: str) -> list[str]:
    """Proposals of `bp`, each recorded with a run, grade 0.9 and reward 0.8."""
    ids = store.add_proposals([proposal(bp, p) for p in patterns])
    store.record_executions_and_grades(
        [(pid, run_ok(finding()), grade(0.9), reward(0.8)) for pid in ids]
    )
    return ids


def test_moving_a_blueprint_to_another_corpus_makes_its_proposals_pending_again(
    store: Store,
) -> None:
    bp, other = blueprint(1), blueprint(2)
    store.blueprints.add([bp, other])
    stale = _verified(store, bp, "a", "b")
    kept = _verified(store, other, "a")
    store.queue(PROPOSAL).decide(stale[0], "accept", "ann")
    assert store.pending_verification() == []

    assert store.blueprints.upsert(replace(bp, corpus="elsewhere")) == "updated"

    assert [p.proposal_id for p in store.pending_verification()] == stale
    for pid in stale:
        item = store.review_item(pid)
        assert item is not None and item.execution is None and item.grade is None
    kept_item = store.review_item(kept[0])
    assert kept_item is not None and kept_item.grade == grade(0.9)
    assert store.counts().executed == 1
    assert store.check_caches() == []
    current = store.current_decision(stale[0])
    assert current is not None and current.action is DecisionAction.ACCEPT


def test_new_expected_spans_regrade_the_stored_runs_at_once(store: Store) -> None:
    """Bug 5 of the review issue: an edit used to un-execute the proposals, accepted ones
    included, so an export carried `grade: null` for them until somebody ran Verify."""
    bp = blueprint(1)
    store.blueprints.add([bp])
    ids = _verified(store, bp, "a", "b")
    store.queue(PROPOSAL).decide(ids[0], "accept", "ann")
    moved = replace(bp, expected=(Span("src/app.py", 1, 1), Span("src/app.py", 7, 7)))

    assert store.blueprints.upsert(moved) == "updated"

    assert store.pending_verification() == []
    item = store.review_item(ids[0])
    assert item is not None and item.execution is not None and item.grade_current
    # The stored finding (line 1) against the new spans, graded by the real grader.
    assert item.grade == grade_findings(item.execution.findings, moved.expected)
    assert item.grade is not None and item.grade.span_recall == 0.5
    assert store.export_answer_counts(QueueFilters())["accepted_stale"] == 0
    assert store.check_caches() == []


def test_marking_a_span_supporting_is_an_edit_that_reads_back_and_regrades(store: Store) -> None:
    bp = replace(blueprint(1), expected=(Span("src/app.py", 1, 1), Span("src/app.py", 2, 3)))
    store.blueprints.add([bp])
    ids = _verified(store, bp, "a")  # its stored run found line 1
    store.record_executions_and_grades(
        [(ids[0], run_ok(finding()), grade_findings([finding()], bp.expected), reward(0.8))]
    )
    marked = replace(bp, expected=(Span("src/app.py", 1, 1, supporting=True), bp.expected[1]))
    assert marked == bp  # Span equality leaves the mark out; the store must not
    assert store.blueprints.upsert(marked) == "updated"
    back = store.blueprints.get(bp.id)
    assert back is not None and [s.supporting for s in back.expected] == [True, False]
    item = store.review_item(ids[0])
    assert item is not None and item.grade_current and item.execution is not None
    # Line 1 is now context: excused, so nothing counted was found and nothing is wrong.
    assert item.grade == grade_findings(item.execution.findings, marked.expected)
    assert item.grade is not None and (item.grade.n_predicted, item.grade.span_recall) == (0, 0.0)
    assert store.blueprints.upsert(marked) == "unchanged"
    assert store.check_caches() == []


def test_edits_that_do_not_change_the_grading_keep_the_grades(store: Store) -> None:
    bp = blueprint(1)
    store.blueprints.add([bp])
    ids = _verified(store, bp, "a")
    reordered = (Span("src/app.py", 5, 5), *bp.expected)
    store.blueprints.upsert(replace(bp, expected=reordered))
    store.record_executions_and_grades([(ids[0], run_ok(finding()), grade(0.9), reward(0.8))])
    edits = [
        replace(bp, expected=reordered, intent="Find every call to handler_1", notes="n"),
        replace(bp, expected=tuple(reversed(reordered)), tags=("other",)),
        replace(bp, expected=reordered, reference_call=rg_call("handler_1")),
    ]
    for edited in edits:
        assert store.blueprints.upsert(edited) == "updated"
        assert store.pending_verification() == []
    item = store.review_item(ids[0])
    assert item is not None and item.grade == grade(0.9)


def test_upsert_refuses_a_twin_of_another_blueprint(store: Store) -> None:
    store.blueprints.add([blueprint(1)])
    with pytest.raises(StoreError, match="bp-001"):
        store.blueprints.upsert(replace(blueprint(1), id="bp-twin"))


def test_list_blueprints_filters_and_pages(store: Store) -> None:
    store.blueprints.add(
        [
            blueprint(1, language="python"),
            blueprint(2, language="go", tags=("pcre2",)),
            blueprint(3, tool="ripgrep_search", language="go", intent="Find TODO markers"),
        ]
    )
    assert store.blueprints.list(BlueprintFilters(language="go")).total == 2
    assert [b.id for b in store.blueprints.list(BlueprintFilters(tag="pcre2")).items] == ["bp-002"]
    assert [b.id for b in store.blueprints.list(BlueprintFilters(text="todo")).items] == ["bp-003"]
    page = store.blueprints.list(offset=1, limit=1)
    assert (page.total, [b.id for b in page.items]) == (3, ["bp-002"])


# --- proposals, runs, grades -----------------------------------------------------------------------


def test_the_same_call_for_the_same_blueprint_is_stored_once(store: Store) -> None:
    bp = blueprint(1)
    store.blueprints.add([bp])
    first = proposal(bp, "handler", engine="vllm", model="qwen")
    again = proposal(bp, "handler", engine="openai", model="gpt")
    other = proposal(bp, "other")
    ids = store.add_proposals([first, again, other, invalid_proposal(bp), invalid_proposal(bp)])
    assert ids[0] == ids[1] and ids[3] == ids[4]
    assert len(set(ids)) == 3
    assert store.counts().proposals == 3
    stored = store.get_proposal(ids[0])
    assert stored is not None
    assert stored.sightings == 2
    assert stored.proposal == first


def test_proposals_for_an_unknown_blueprint_are_refused(store: Store) -> None:
    with pytest.raises(StoreError, match="unknown blueprint"):
        store.add_proposals([proposal(blueprint(7))])
    assert store.counts().proposals == 0


def test_pending_verification_lists_unexecuted_proposals_oldest_first(store: Store) -> None:
    bp = blueprint(1)
    store.blueprints.add([bp])
    a, b, bad = store.add_proposals([proposal(bp, "a"), proposal(bp, "b"), invalid_proposal(bp)])
    assert [p.proposal_id for p in store.pending_verification()] == [a, b]
    pending = store.pending_verification(include_invalid=True)
    assert [p.proposal_id for p in pending] == [a, b, bad]
    assert pending[2].call_json is None and "max_tokens" in pending[2].invalid_reason
    assert (pending[0].corpus, pending[0].expected) == (bp.corpus, bp.expected)
    store.record_execution_and_grade(a, run_ok(finding()), grade(1.0), reward())
    assert [p.proposal_id for p in store.pending_verification()] == [b]


def test_a_real_run_and_its_grade_read_back_equal(store: Store, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "src").mkdir(parents=True)
    (corpus / "src" / "app.py").write_text("x = 1\nhandler(x)\nhandler(y)\n", encoding="utf-8")
    bp = replace(blueprint(1), expected=(Span("src/app.py", 2, 2), Span("src/app.py", 3, 3)))
    store.blueprints.add([bp])
    prop = proposal(bp, r"handler\(")
    [pid] = store.add_proposals([prop])
    assert prop.call is not None
    run = run_tool_call(prop.call, corpus)
    assert run.ok and len(run.findings) == 2
    g = grade_findings(run.findings, bp.expected)
    r = reward_for(g, prop.call, run)
    store.record_execution_and_grade(pid, run, g, r)
    item = store.review_item(pid)
    assert item is not None and item.execution is not None
    assert item.execution.findings == run.findings
    assert item.grade == g
    assert item.reward == r


def test_recording_a_run_again_replaces_it(store: Store) -> None:
    bp = blueprint(1)
    store.blueprints.add([bp])
    [pid] = store.add_proposals([proposal(bp)])
    store.record_execution_and_grade(pid, run_failed(), None, reward(-1.0))
    store.record_execution_and_grade(pid, run_ok(finding()), grade(0.5), reward(0.4))
    item = store.review_item(pid)
    assert item is not None and item.execution is not None
    assert item.execution.ok and item.grade == grade(0.5)
    assert store.counts().executed == 1
    assert store.check_caches() == []


def test_a_batch_of_runs_is_recorded_in_one_go_and_keeps_the_caches(store: Store) -> None:
    bp = blueprint(1)
    store.blueprints.add([bp])
    a, b, c = store.add_proposals([proposal(bp, "a"), proposal(bp, "b"), proposal(bp, "c")])
    store.record_executions_and_grades(
        [
            (a, run_ok(finding(), finding(line=2, text="héllo")), grade(0.5), reward(0.4)),
            (b, run_failed(), None, reward(-1.0)),
            (c, run_failed(), None, reward(-1.0)),
            (c, run_ok(), grade(1.0), reward(1.0)),  # named twice: the last one counts
        ]
    )
    assert store.counts().executed == 3
    assert store.check_caches() == []
    first, failed, last = (store.review_item(i) for i in (a, b, c))
    assert first is not None and first.execution is not None
    assert first.execution.findings == (finding(), finding(line=2, text="héllo"))
    assert first.grade == grade(0.5) and first.reward == reward(0.4)
    assert failed is not None and failed.execution is not None and failed.grade is None
    assert failed.execution.error_kind == "invalid_pattern" and failed.execution.return_code == 2
    assert last is not None and last.grade == grade(1.0)
    store.record_executions_and_grades([])  # nothing to do


def test_a_batch_naming_an_unknown_proposal_records_none_of_it(store: Store) -> None:
    bp = blueprint(1)
    store.blueprints.add([bp])
    [pid] = store.add_proposals([proposal(bp)])
    batch = [(pid, run_ok(), grade(1.0), reward()), ("nope", run_ok(), grade(1.0), reward())]
    with pytest.raises(StoreError, match="no proposal with id 'nope'"):
        store.record_executions_and_grades(batch)
    assert store.counts().executed == 0
    assert store.check_caches() == []


def test_a_failed_run_without_grade_keeps_its_error(store: Store) -> None:
    bp = blueprint(1)
    store.blueprints.add([bp])
    [pid] = store.add_proposals([proposal(bp)])
    store.record_execution_and_grade(pid, run_failed(), None, reward(-1.0))
    item = store.review_item(pid)
    assert item is not None and item.execution is not None
    assert item.grade is None and item.reward == reward(-1.0)
    assert item.execution.error_kind == "invalid_pattern"


def test_a_failure_half_way_through_a_write_leaves_nothing(store: Store) -> None:
    bp = blueprint(1)
    store.blueprints.add([bp])
    [pid] = store.add_proposals([proposal(bp)])
    # The execution row goes in first; the grade's n_predicted overflows its INTEGER column after it.
    too_big = replace(grade(0.5), n_predicted=2**40)
    with pytest.raises(StoreError, match="Nothing was written"):
        store.record_execution_and_grade(pid, run_ok(finding()), too_big, reward())
    assert store.counts().executed == 0
    item = store.review_item(pid)
    assert item is not None and item.execution is None and item.grade is None


#: A statement that runs for minutes, so a Ctrl-C sent while it runs surely lands inside DuckDB.
_ENDLESS = "SELECT count(*) FROM range(10000000000000) t(i) WHERE i % 7 = 3"


def _ctrl_c_soon(store: Store) -> threading.Timer:
    """Press Ctrl-C in half a second.

    DuckDB looks for Ctrl-C only between the tasks it runs on the calling thread; with more
    threads the one long task may run on another and the signal goes unseen until it ends. One
    thread makes the test deterministic.
    """
    store._read(lambda cur: cur.execute("SET threads = 1"))
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


@pytest.mark.timeout(60)
def test_ctrl_c_during_a_write_is_a_keyboard_interrupt_and_writes_nothing(store: Store) -> None:
    bp = blueprint(1)
    store.blueprints.add([bp])
    [pid] = store.add_proposals([proposal(bp)])

    def record_then_stall(cur: Any) -> None:
        store_writes.record_executions(cur, [(pid, run_ok(), grade(1.0), reward())])
        cur.execute(_ENDLESS).fetchall()

    # Only a private door reaches a statement slow enough to interrupt; what is tested is the
    # wrapper every public write goes through.
    timer = _ctrl_c_soon(store)
    with pytest.raises(KeyboardInterrupt) as caught:
        store._write(record_then_stall, what="stall")
    timer.join()
    # DuckDB raised RuntimeError("Query interrupted"); the store turned it back into Ctrl-C.
    assert isinstance(caught.value.__cause__, RuntimeError)
    assert store.counts().executed == 0
    store.record_execution_and_grade(pid, run_ok(), grade(1.0), reward())  # the store still works
    assert store.counts().executed == 1


@pytest.mark.timeout(60)
def test_ctrl_c_during_a_read_is_a_keyboard_interrupt(store: Store) -> None:
    timer = _ctrl_c_soon(store)
    with pytest.raises(KeyboardInterrupt):
        store._read(lambda cur: cur.execute(_ENDLESS).fetchall())
    timer.join()
    assert store.counts().blueprints == 0


def test_a_batch_with_one_bad_proposal_stores_none_of_it(store: Store) -> None:
    bp = blueprint(1)
    store.blueprints.add([bp])
    batch = [proposal(bp, "a"), proposal(bp, "b"), proposal(bp, "c", prompt_tokens=2**40)]
    with pytest.raises(StoreError):
        store.add_proposals(batch)
    assert store.counts().proposals == 0
    assert store.add_proposals(batch[:2])  # the good ones go in on their own


# --- the review queue ------------------------------------------------------------------------------


@pytest.fixture
def queue(store: Store) -> list[str]:
    """Six proposals over three blueprints (python/go, ast-grep/ripgrep), two graded."""
    bps = [
        blueprint(1, language="python", tags=("structure",)),
        blueprint(2, language="go", tags=("pcre2",), intent="Find Printf calls in Go"),
        blueprint(3, tool="ripgrep_search", language="go"),
    ]
    store.blueprints.add(bps)
    ids = store.add_proposals(
        [
            proposal(bps[0], "a", engine="vllm", model="qwen"),
            proposal(bps[0], "b", mutation_kind="swap_tool"),
            proposal(bps[1], "c", engine="vllm", model="qwen"),
            invalid_proposal(bps[1]),
            proposal(bps[2], "e", mutation_kind="drop_pcre2"),
            proposal(bps[2], "f", engine="vllm", model="llama"),
        ]
    )
    store.record_execution_and_grade(ids[0], run_ok(finding()), grade(0.9), reward(0.9))
    store.record_execution_and_grade(ids[2], run_ok(finding()), grade(0.2), reward(0.1))
    store.record_execution_and_grade(ids[1], run_ok(finding()), None, reward(0.0))
    return ids


def _ids(page: object) -> list[str]:
    return [i.proposal_id for i in page.items]  # type: ignore[attr-defined]


def test_the_queue_holds_undecided_items_in_arrival_order(store: Store, queue: list[str]) -> None:
    store.queue(PROPOSAL).decide(queue[1], "accept", "ann")
    page = store.review_queue()
    assert page.total == 5
    assert _ids(page) == [queue[0], *queue[2:]]
    first = page.items[0]
    assert (first.intent, first.language, first.engine, first.span_f1) == (
        "Find the calls to handler_1",
        "python",
        "vllm",
        0.9,
    )


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (QueueFilters(language="go"), [2, 3, 4, 5]),
        (QueueFilters(tool="ripgrep_search"), [4, 5]),
        (QueueFilters(tag="pcre2"), [2, 3]),
        (QueueFilters(text="printf"), [2, 3]),
        (QueueFilters(engine="vllm", model="qwen"), [0, 2]),
        (QueueFilters(mutation_kind="drop_pcre2"), [4]),
        (QueueFilters(proposed_tool="invalid"), [3]),
        (QueueFilters(valid_only=True, language="go"), [2, 4, 5]),
        (QueueFilters(min_f1=0.5), [0]),
        (QueueFilters(max_f1=0.5), [2]),
        (QueueFilters(blueprint_id="bp-003"), [4, 5]),
    ],
)
def test_queue_filters(
    store: Store, queue: list[str], filters: QueueFilters, expected: list[int]
) -> None:
    page = store.review_queue(filters)
    assert _ids(page) == [queue[i] for i in expected]
    assert page.total == len(expected)


@pytest.mark.parametrize(
    ("state", "reviewer", "expected"),
    [
        (DecisionState.UNDECIDED, None, [2, 3, 4, 5]),
        (DecisionState.UNDECIDED, "ann", [3, 4, 5]),  # ann skipped 2: done for her, open for bob
        (DecisionState.UNDECIDED, "bob", [2, 3, 4, 5]),
        (DecisionState.ACCEPTED, None, [0]),
        (DecisionState.REJECTED, None, [1]),
        (DecisionState.SKIPPED, None, [2]),
        (DecisionState.SKIPPED, "bob", []),
        (DecisionState.MINE, "ann", [0, 1, 2]),
        (DecisionState.DECIDED, None, [0, 1]),
        (DecisionState.ANY, None, [0, 1, 2, 3, 4, 5]),
    ],
)
def test_queue_filters_by_decision_state(
    store: Store, queue: list[str], state: DecisionState, reviewer: str | None, expected: list[int]
) -> None:
    store.queue(PROPOSAL).decide(queue[0], "accept", "ann")
    store.queue(PROPOSAL).decide(queue[1], "reject", "ann")
    store.queue(PROPOSAL).decide(queue[2], "skip", "ann")
    store.queue(PROPOSAL).decide(queue[3], "reject", "ann")
    store.queue(PROPOSAL).decide(queue[3], "undo", "ann")
    filters = QueueFilters(decision=state, reviewer=reviewer)
    assert _ids(store.review_queue(filters)) == [queue[i] for i in expected]


def test_intent_search_is_literal_and_ignores_case(store: Store) -> None:
    store.blueprints.add(
        [
            blueprint(1, intent="Find the CAFÉ handlers"),
            blueprint(2, intent="Find 100% of the snake_case names"),
            blueprint(3, intent="Find 1000 snakeXcase names"),
        ]
    )
    store.add_proposals([proposal(blueprint(i)) for i in (1, 2, 3)])
    assert [i.blueprint_id for i in store.review_queue(QueueFilters(text="café")).items] == [
        "bp-001"
    ]
    for literal in ("100%", "snake_case"):
        found = store.review_queue(QueueFilters(text=literal)).items
        assert [i.blueprint_id for i in found] == ["bp-002"], literal
    assert store.blueprints.list(BlueprintFilters(text="BP-003")).total == 1


def test_queue_pages_cover_the_queue_once(store: Store, queue: list[str]) -> None:
    pages = [store.review_queue(ANY, offset=o, limit=4) for o in (0, 4, 8)]
    assert [_ids(p) for p in pages] == [queue[:4], queue[4:], []]
    assert {p.total for p in pages} == {6}
    assert store.review_queue(ANY, limit=0).total == 6


def test_next_review_item_skips_decided_items_and_resumes_after_one(
    store: Store, queue: list[str]
) -> None:
    first = store.next_review_item()
    assert first is not None and first.proposal_id == queue[0]
    store.queue(PROPOSAL).decide(queue[0], "accept", "ann")
    following = store.next_review_item()
    assert following is not None and following.proposal_id == queue[1]
    after = store.next_review_item(QueueFilters(language="go"), after_id=queue[3])
    assert after is not None and after.proposal_id == queue[4]
    assert store.next_review_item(after_id=queue[5]) is None


def test_queue_position_counts_from_one(store: Store, queue: list[str]) -> None:
    assert store.queue_position(QueueFilters(language="go"), queue[4]) == (3, 4)
    assert store.queue_position(QueueFilters(language="go"), queue[0]) == (None, 4)


def test_review_item_brings_everything_the_review_page_shows(
    store: Store, queue: list[str]
) -> None:
    store.queue(PROPOSAL).decide(queue[0], "accept", "ann", note="exact")
    item = store.review_item(queue[0])
    assert item is not None
    assert item.blueprint.id == "bp-001"
    assert item.proposal.proposal.engine == "vllm"
    assert item.execution is not None and item.execution.findings == (finding(),)
    assert item.grade == grade(0.9)
    assert item.decision is not None and item.decision.note == "exact"
    assert len(item.history) == 1
    assert store.review_item("missing") is None


def test_dashboard_counts_rates_and_charts(store: Store, queue: list[str]) -> None:
    store.record_execution_and_grade(queue[4], run_failed(), None, reward(-1.0))
    store.queue(PROPOSAL).decide(queue[0], "accept", "ann")
    store.queue(PROPOSAL).decide(queue[4], "reject", "ann")
    store.queue(PROPOSAL).decide(queue[3], "reject", "ann")
    store.queue(PROPOSAL).decide(queue[5], "skip", "ann")
    stats = store.dashboard_stats()
    c = stats.counts
    assert (c.blueprints, c.proposals, c.valid, c.executed, c.graded) == (3, 6, 5, 4, 2)
    # A skip says "not me": the item stays open for the other reviewers.
    assert (c.accepted, c.rejected, c.skipped, c.undecided, c.decision_events) == (1, 2, 1, 3, 4)
    assert stats.acceptance_rate == pytest.approx(1 / 3)
    assert stats.mean_span_f1 == pytest.approx(0.55)
    assert sum(n for _, _, n in stats.decisions_per_day) == 4
    assert ("ast_grep_search", "python", 1, 0) in stats.acceptance_by_tool_language
    assert ("ast_grep_search", "go", 0, 1) in stats.acceptance_by_tool_language
    assert [n for _, _, n in stats.span_f1_histogram] == [0, 0, 1, 0, 0, 0, 0, 0, 0, 1]
    assert ("ast_grep_search", "invalid", 1) in stats.tool_confusion
    assert ("ripgrep_search", "ripgrep_search", 2) in stats.tool_confusion
    assert stats.reject_mutation_kinds == (("drop_pcre2", 1),)
    assert dict(stats.reject_error_kinds) == {"invalid_pattern": 1, "invalid_call": 1}
    assert stats.to_dict()["counts"]["accepted"] == 1


def test_an_empty_store_has_no_rates(store: Store) -> None:
    stats = store.dashboard_stats()
    assert stats.acceptance_rate is None and stats.mean_span_f1 is None
    assert store.review_queue().total == 0
    assert store.next_review_item() is None


def test_a_closed_store_says_so(tmp_path: Path) -> None:
    s = Store(tmp_path / "s.duckdb")
    s.close()
    with pytest.raises(StoreError, match="closed"):
        s.counts()


def test_a_runs_warnings_are_stored_with_it(tmp_path: Path) -> None:
    """v6: what the runner warned about (a pattern read as another construct) reaches the card."""
    with Store(tmp_path / "studio.duckdb") as store:
        bp = blueprint(0)
        store.blueprints.add([bp])
        (pid,) = store.add_proposals([proposal(bp, "a")])
        warned = RunResult(ok=True, findings=(), warnings=("read as a type conversion",))
        store.record_execution_and_grade(pid, warned, grade(0.0), reward(0.0))
        item = store.review_item(pid)
        assert item is not None and item.execution is not None
        assert item.execution.warnings == ("read as a type conversion",)
        assert item.execution.to_run().warnings == ("read as a type conversion",)
