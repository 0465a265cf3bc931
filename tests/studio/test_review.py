"""The Review page's logic: the next item, findings rows, an edited call re-run. Real stores,
real corpora, real tools."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codesearch_core import ingest, studio
from codesearch_core.engines.mutations import MutationEngine
from codesearch_core.models import DecisionAction
from codesearch_core.store.core import Store
from codesearch_core.store.types import BlueprintFilters, QueueFilters
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
    seeded.record_decision(queue[0], DecisionAction.ACCEPT, "ann")
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
