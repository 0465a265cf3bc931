"""The Review page's logic: the next item, findings rows, an edited call re-run. Real stores,
real corpora, real tools."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from codesearch_core import ingest, studio
from codesearch_core.engines.mutations import MutationEngine
from codesearch_core.errors import StoreError
from codesearch_core.models import DecisionAction, Span
from codesearch_core.store import DRAFT, DRIFT, KINDS, PROPOSAL
from codesearch_core.store.core import Store
from codesearch_core.store.filters import QueueFilters
from codesearch_core.store.types import BlueprintFilters, DecisionState
from codesearch_core.synthesis import TemplateWriter, synthesize
from codesearch_core.tools.schemas import parse_tool_call
from codesearch_core.verify.pending import verify_pending


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "studio.duckdb") as s:
        yield s


@pytest.fixture
def seeded(store: Store) -> Store:
    ingest.ensure_seeded(store)
    return store


def _propose_and_verify(store: Store, n: int = 2) -> None:
    """Mutations for one small corpus's blueprints, executed and graded (a few seconds)."""
    blueprints = studio.all_blueprints(store, BlueprintFilters(corpus="ledger"), limit=1000)
    studio.propose_into_store(store, MutationEngine(), blueprints, n=n)
    verify_pending(store, workers=1)


def test_the_next_item_wraps_round_to_the_start_of_the_queue(seeded: Store) -> None:
    _propose_and_verify(seeded)
    queue = [i.proposal_id for i in seeded.review_queue(limit=1000).items]
    assert studio.next_item_id(seeded, QueueFilters()) == queue[0]
    assert studio.next_item_id(seeded, QueueFilters(), after_id=queue[0]) == queue[1]
    assert studio.next_item_id(seeded, QueueFilters(), after_id=queue[-1]) == queue[0]
    seeded.queue(PROPOSAL).decide(queue[0], DecisionAction.ACCEPT, "ann")
    assert studio.next_item_id(seeded, QueueFilters()) == queue[1]


def test_review_findings_rows_come_from_the_stored_run(seeded: Store) -> None:
    _propose_and_verify(seeded)
    item = seeded.review_item(seeded.review_queue(limit=1).items[0].proposal_id)
    assert item is not None and item.execution is not None
    rows = studio.finding_rows_for(item)
    assert rows is not None
    hits = sum(r.status.value == "hit" for r in rows)
    assert item.grade is not None and hits == item.grade.n_matched


def test_an_edited_call_is_a_new_graded_proposal_with_its_parent(seeded: Store) -> None:
    _propose_and_verify(seeded)
    parent = next(
        i
        for i in seeded.review_queue(limit=1000).items
        if i.span_f1 is not None and i.span_f1 < 1.0
    )
    item = seeded.review_item(parent.proposal_id)
    assert item is not None
    fixed = item.blueprint.reference_call
    child_id = studio.rerun_edited(seeded, item, fixed, "ann")
    child = seeded.review_item(child_id)
    assert child is not None and child.proposal.proposal.parent_id == parent.proposal_id
    assert child.proposal.proposal.engine == studio.EDIT_ENGINE
    assert child.grade is not None and child.grade.span_f1 == 1.0


def test_an_edited_call_equal_to_an_earlier_proposal_is_that_proposal(seeded: Store) -> None:
    _propose_and_verify(seeded)
    first = seeded.review_queue(limit=1).items[0]
    item = seeded.review_item(first.proposal_id)
    assert item is not None and item.proposal.proposal.call is not None
    same = parse_tool_call(item.proposal.proposal.call.to_dict())
    assert studio.rerun_edited(seeded, item, same, "ann") == first.proposal_id


@pytest.mark.parametrize(
    "filters",
    [
        QueueFilters(),
        QueueFilters(decision=DecisionState.CONFLICT),
        QueueFilters(tool="ripgrep_search", language="go", tag="pcre2", engine="vllm"),
        QueueFilters(proposed_tool="invalid", mutation_kind="drop_pcre2", valid_only=True),
        QueueFilters(min_f1=0.0, max_f1=0.45, decision=DecisionState.ANY, text="café & 100%"),
    ],
)
def test_review_filters_go_through_the_address_and_back(filters: QueueFilters) -> None:
    """Bug 8: filters were lost on reload. The address carries them (the reviewer apart)."""
    params = studio.filters_to_params(filters)
    assert set(params) <= set(studio.FILTER_PARAMS)
    assert studio.filters_from_params(params, "ann") == replace(filters, reviewer="ann")


def test_a_hand_edited_address_does_not_break_the_filters() -> None:
    params = {"decision": "maybe", "min_f1": "nan", "max_f1": "7", "tag": "x" * 500}
    filters = studio.filters_from_params(params, None)
    assert filters.decision is DecisionState.UNDECIDED
    assert (filters.min_f1, filters.max_f1) == (None, 1.0)
    assert filters.tag is not None and len(filters.tag) == 200


def test_accept_needs_a_valid_call_that_ran_and_the_card_says_why(seeded: Store) -> None:
    _propose_and_verify(seeded)
    items = [seeded.review_item(i.proposal_id) for i in seeded.review_queue(limit=100).items]
    ran = next(i for i in items if i is not None and i.execution and i.execution.ok)
    failed = next(i for i in items if i is not None and i.execution and not i.execution.ok)
    assert studio.accept_blocker(ran) is None
    assert "run failed" in (studio.accept_blocker(failed) or "")
    assert studio.still_to_do(ran, "ann")
    seeded.queue(PROPOSAL).decide(ran.proposal.id, DecisionAction.ACCEPT, "ann")
    decided = seeded.review_item(ran.proposal.id)
    assert decided is not None and not studio.still_to_do(decided, "ann")


def test_run_it_now_executes_and_grades_a_pending_item(seeded: Store) -> None:
    blueprints = studio.all_blueprints(seeded, BlueprintFilters(corpus="ledger"), limit=1)
    studio.propose_into_store(seeded, MutationEngine(), blueprints, n=1)
    pid = seeded.pending_verification()[0].proposal_id
    item = seeded.review_item(pid)
    assert item is not None and item.execution is None
    assert "Not executed yet" in (studio.accept_blocker(item) or "")
    studio.run_item(seeded, item)
    after = seeded.review_item(pid)
    assert after is not None and after.execution is not None and after.grade_current


def test_run_it_now_stores_nothing_when_the_blueprint_changed_meanwhile(seeded: Store) -> None:
    """Bug 12: a grade computed against a blueprint's old expected spans must not be written."""
    blueprints = studio.all_blueprints(seeded, BlueprintFilters(corpus="ledger"), limit=1)
    studio.propose_into_store(seeded, MutationEngine(), blueprints, n=1)
    pid = seeded.pending_verification()[0].proposal_id
    item = seeded.review_item(pid)
    assert item is not None
    bp = item.blueprint
    edited = replace(bp, expected=(*bp.expected, Span(bp.expected[0].path, 1, 1)))
    seeded.blueprints.upsert(edited)  # the card still holds the blueprint as it was
    with pytest.raises(StoreError, match="edited while this ran"):
        studio.run_item(seeded, item)
    assert [p.proposal_id for p in seeded.pending_verification()] == [pid]


def test_a_card_stepped_back_to_is_placed_where_it_was_decided() -> None:
    seen = [("e1", "accept"), ("e2", "skip"), ("e3", None)]  # e3: decided, then undone
    assert [studio.queue_place(seen, i, done=2) for i in ("e1", "e2", "e3")] == [1, 2, 3]
    assert studio.queue_place(seen, "e4", done=2) == 3  # still to do: after the decided ones
    assert studio.queue_place([], "e1", done=0) == 1


def test_others_reviews_are_hidden_while_the_item_is_to_do_and_shown_after(seeded: Store) -> None:
    _propose_and_verify(seeded, n=1)
    store = seeded
    queue = [i.proposal_id for i in store.review_queue(limit=5).items]
    store.queue(PROPOSAL).decide(queue[0], DecisionAction.REJECT, "bob", note="misses a file")
    item = store.review_item(queue[0])
    assert item is not None and item.state == "reject"  # one review settles it: all shown
    store.queue(PROPOSAL).undo("bob")
    store.queue(PROPOSAL).decide(queue[0], DecisionAction.SKIP, "bob")
    item = store.review_item(queue[0])
    assert item is not None
    line, history = studio.reviews_seen(item, "ann")
    assert (line, history) == ("1 hidden until you give yours", ())  # bob's events too
    store.queue(PROPOSAL).decide(queue[0], DecisionAction.SKIP, "ann")
    item = store.review_item(queue[0])
    assert item is not None
    line, history = studio.reviews_seen(item, "ann", {"skip": "skipped"})
    assert line == "bob **skipped** · ann **skipped**"
    assert [e.reviewer for e in history] == ["bob", "bob", "bob", "ann"]


def test_every_queue_kind_offers_reject_reasons_and_the_store_keeps_the_one_picked(
    store: Store,
) -> None:
    # Episodes and Drafts took no reason at all (issue 39): every kind of the registry has its own.
    for kind in KINDS:
        reasons = studio.reject_reasons(kind)
        assert reasons and len(set(reasons)) == len(reasons), kind
        assert reasons[-1] == "other", kind  # the note says what the list does not
    assert studio.reject_reasons(DRIFT) == studio.reject_reasons(PROPOSAL)  # an accepted proposal
    assert studio.reject_reasons("no-such-kind") == ()
    # What a card's picker records travels with the vote into the item's history.
    ingest.ensure_seeded(store)
    synthesize("ledger", writer=TemplateWriter(), sink=store.drafts, limit=1)
    (draft,), _ = store.drafts.list(status=None, limit=10)
    why = studio.reject_reasons(DRAFT)[0]
    store.queue(DRAFT).decide(draft.id, DecisionAction.REJECT, "ann", reason=why)
    (event,) = store.queue(DRAFT).history(draft.id)
    assert (event.action, event.reviewer, event.reason) == (DecisionAction.REJECT, "ann", why)
