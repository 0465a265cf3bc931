"""A lead's bulk actions over a filter: what they decide and leave out (and why), one batch that
one undo takes back, audited, and nothing written when the count confirmed is no longer true."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from store_helpers import blueprint, executed, proposal, reward, run_failed

from codesearch_core.access import AccessDenied, Actor, Mode, load_settings
from codesearch_core.errors import StoreError
from codesearch_core.models import DecisionAction, Span
from codesearch_core.store import (
    AuditFilters,
    DecisionState,
    DriftItem,
    QueueFilters,
    Store,
    utc_now,
)
from codesearch_core.store.types import StaleDecisionError

ACCEPT, REJECT = DecisionAction.ACCEPT, DecisionAction.REJECT
ANY = QueueFilters(decision=DecisionState.ANY)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "studio.duckdb") as s:
        yield s


@pytest.fixture
def items(store: Store) -> dict[str, str]:
    """One item of each kind, by name."""
    bp = blueprint(1)
    store.add_blueprints([bp])
    names = ("perfect", "perfect2", "partial", "failed", "not_run", "conflict", "decided")
    ids = dict(zip(names, store.add_proposals([proposal(bp, n) for n in names]), strict=True))
    executed(store, [ids[n] for n in ("perfect", "perfect2", "conflict", "decided")])
    executed(store, [ids["partial"]], f1=0.5)
    store.record_execution_and_grade(ids["failed"], run_failed(), None, reward(0.0))
    store.set_review_settings(store.review_settings().__class__(reviews_per_item=2))
    store.record_decision(ids["conflict"], ACCEPT, "ann")
    store.record_decision(ids["conflict"], REJECT, "bob")
    store.record_decision(ids["decided"], REJECT, "ann", final=True)
    return ids


def test_a_bulk_accept_takes_only_perfect_runs_and_says_what_it_leaves_out(
    store: Store, items: dict[str, str]
) -> None:
    plan = store.bulk_plan(ANY, ACCEPT)
    assert set(plan.item_ids) == {items["perfect"], items["perfect2"]}
    assert plan.left_out == {
        "in conflict": 1, "already decided": 1, "not run yet": 1, "run failed": 1,
        "grade not perfect": 1,
    }  # fmt: skip
    assert plan.summary() == (
        "2 will be accepted; 5 left out: 1 in conflict, 1 already decided, 1 not run yet, "
        "1 run failed, 1 grade not perfect"
    )


def test_an_item_in_drift_is_left_out_of_a_bulk_accept(store: Store, items: dict[str, str]) -> None:
    # Its findings changed on the corpus as it is now: it needs a look, not a bulk accept.
    store.add_drift(
        [DriftItem(items["perfect2"], "proposal", "bp-001", (Span("src/app.py", 1, 1),), (),
                   None, None, None, None, utc_now())]
    )  # fmt: skip
    plan = store.bulk_plan(ANY, ACCEPT)
    assert plan.item_ids == (items["perfect"],) and plan.left_out["in drift"] == 1


def test_a_bulk_reject_decides_every_open_item_with_one_reason(
    store: Store, items: dict[str, str]
) -> None:
    plan = store.bulk_plan(ANY, REJECT)
    assert len(plan.item_ids) == 5 and plan.left_out == {"in conflict": 1, "already decided": 1}
    batch, done = store.bulk_decide(ANY, REJECT, "lee", expected=plan, reason="wrong tool")
    assert done.item_ids == plan.item_ids
    for item in plan.item_ids:
        found = store.review_item(item)
        assert found is not None and found.state == "reject"
        assert found.decision is not None
        assert (found.decision.reason, found.decision.batch_id) == ("wrong tool", batch)


def test_one_undo_takes_the_whole_batch_back(store: Store, items: dict[str, str]) -> None:
    store.record_decision(items["partial"], REJECT, "lee")  # before the batch: stays
    plan = store.bulk_plan(ANY, ACCEPT)
    batch, _ = store.bulk_decide(ANY, ACCEPT, "lee", expected=plan)
    assert store.last_undoable_batch("lee") == (batch, 2)
    store.undo_last("lee")
    for item in plan.item_ids:
        found = store.review_item(item)
        assert found is not None and found.state is None
    assert store.last_undoable_batch("lee") is None
    assert store.last_undoable("lee") == (items["partial"], store.item_history(
        items["partial"])[-1].event_id, "reject")  # fmt: skip
    assert store.check_caches() == []
    actions = [e.action for e in store.audit_log(AuditFilters(action="decision.bulk"))]
    assert actions == ["decision.bulk.undo", "decision.bulk.accept"]


def test_a_count_that_is_no_longer_true_decides_nothing(
    store: Store, items: dict[str, str]
) -> None:
    plan = store.bulk_plan(ANY, ACCEPT)
    store.record_decision(items["perfect"], REJECT, "lee", final=True)  # meanwhile, elsewhere
    with pytest.raises(StaleDecisionError, match="2 then, 1 now"):
        store.bulk_decide(ANY, ACCEPT, "lee", expected=plan)
    found = store.review_item(items["perfect2"])
    assert found is not None and found.state is None


def test_a_filter_with_nothing_to_decide_is_refused(store: Store, items: dict[str, str]) -> None:
    only_failed = QueueFilters(decision=DecisionState.ANY, text="failed")
    plan = store.bulk_plan(only_failed, ACCEPT)
    assert plan.item_ids == () and plan.left_out == {"run failed": 1}
    with pytest.raises(StoreError, match="nothing to accept: 0 will be accepted; 1 left out"):
        store.bulk_decide(only_failed, ACCEPT, "lee", expected=plan)


def test_only_a_lead_decides_in_bulk(store: Store, items: dict[str, str]) -> None:
    settings = load_settings({}, {"auth": "oidc"})
    annotator = store.acting_as(Actor("ann@x", Mode.OIDC))
    annotator.sign_in(settings)
    plan = annotator.bulk_plan(ANY, REJECT)
    with pytest.raises(AccessDenied, match="lead"):
        annotator.bulk_decide(ANY, REJECT, "ann@x", expected=plan)
