"""The queue contract (`store.queue`): every behaviour a review queue has, run over every kind in
`queue_kinds.KINDS` against a real DuckDB store. Where the kinds differ, the `QueueKind` says how
(reviews per item, what blocks an accept), and the test reads it from there, never a kind's name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path

import pytest

from codesearch_core.errors import StoreError
from codesearch_core.models import DecisionAction, Span
from codesearch_core.store import (
    DecisionState,
    ItemFilters,
    QADataset,
    StaleDecisionError,
    Store,
    StoredEpisode,
    utc_now,
)
from codesearch_core.store.pinning import DriftItem
from codesearch_core.store.queue import Queue
from codesearch_core.store.queue_kinds import KINDS
from tests.store.test_episodes import episode
from tests.store.test_store_drafts import draft
from tests.store_helpers import blueprint, executed, proposal

ACCEPT, REJECT, SKIP = DecisionAction.ACCEPT, DecisionAction.REJECT, DecisionAction.SKIP


def _proposals(store: Store, n: int) -> list[str]:
    bp = blueprint(0)
    store.blueprints.add([bp])
    ids = store.add_proposals([proposal(bp, f"handler_{i}") for i in range(n)])
    executed(store, ids)
    return ids


def _drafts(store: Store, n: int) -> list[str]:
    for i in range(n):
        store.drafts.add(draft(i))
    return [draft(i).id for i in range(n)]


def _drift(store: Store, n: int) -> list[str]:
    ids = _proposals(store, n)
    spans = (Span("src/app.py", 1, 1),)
    store.drift.add(
        [DriftItem(pid, "proposal", blueprint(0).id, spans, (), None, None, None, None, utc_now())
         for pid in ids]
    )  # fmt: skip
    return ids


def _episodes(store: Store, n: int) -> list[str]:
    store.episodes.save([episode(pattern=f"p{i}") for i in range(n)])
    return [e.episode_id for e in store.episodes.list()]


def _qa(store: Store, n: int) -> list[str]:
    dataset = QADataset("d1", "small", "/data/ds", "f00d")
    store.qa.import_sample(dataset, [(f"s{i}", {"id": str(i)}) for i in range(n)])
    return [item.qa_id for item in store.qa.items("d1")]


#: Each kind's items, made the way its producer makes them (in queue order).
MAKE: dict[str, Callable[[Store, int], list[str]]] = {
    "proposal": _proposals,
    "draft": _drafts,
    "drift": _drift,
    "episode": _episodes,
    "qa": _qa,
}


def _blocked_episode(store: Store) -> str:
    gone: StoredEpisode = replace(episode(pattern="gone"), corpus="a-corpus-that-is-gone")
    store.episodes.save([gone])
    return store.episodes.list()[-1].episode_id


def _unrun_proposal(store: Store) -> str:
    bp = blueprint(1)
    store.blueprints.add([bp])
    return store.add_proposals([proposal(bp, "never_run")])[0]


#: An item the kind's `accept_blocker` refuses, for the kinds that have one.
BLOCKED: dict[str, Callable[[Store], str]] = {
    "proposal": _unrun_proposal,
    "episode": _blocked_episode,
}


def test_every_kind_is_covered() -> None:
    assert set(MAKE) == set(KINDS)
    assert {name for name, k in KINDS.items() if k.accept_blocker is not None} == set(BLOCKED)


@dataclass
class Setup:
    store: Store
    queue: Queue
    items: list[str]

    @property
    def every(self) -> ItemFilters:
        """Every item of the queue, in the kind's own filters."""
        return self.queue.kind.filters(decision=DecisionState.ANY)

    @property
    def settles_alone(self) -> bool:
        """One review settles an item whatever the review settings say."""
        return not self.queue.kind.shared_reviews


@pytest.fixture(params=sorted(KINDS))
def q(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Setup]:
    with Store(tmp_path / "s.duckdb") as store:
        items = MAKE[request.param](store, 3)
        assert len(items) == 3
        yield Setup(store, store.queue(request.param), items)


def test_an_unknown_kind_is_refused_with_the_kinds(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store, pytest.raises(StoreError, match="proposal"):
        store.queue("nonsense")


def test_a_decision_settles_an_item_counts_it_and_is_in_its_history(q: Setup) -> None:
    first, second, _ = q.items
    assert q.queue.counts() == {"open": 3, "accept": 0, "reject": 0, "conflict": 0}
    event = q.queue.decide(first, ACCEPT, "ann", "looks right")
    q.queue.decide(second, REJECT, "ann", reason="wrong")
    assert q.queue.counts() == {"open": 1, "accept": 1, "reject": 1, "conflict": 0}
    (shown,) = q.queue.history(first)
    assert (shown.event_id, shown.reviewer, shown.action, shown.note) == (
        event, "ann", "accept", "looks right"
    )  # fmt: skip
    assert q.queue.history(second)[0].reason == "wrong"
    # The audit trail names each decision by its queue ("decision.accept" for proposals).
    logged = {(e.action, e.target) for e in q.store.audit_log()}
    prefix = q.queue.kind.audit_prefix
    assert {(f"{prefix}.accept", first), (f"{prefix}.reject", second)} <= logged


def test_an_item_needs_the_reviews_its_kind_asks_for(q: Setup) -> None:
    q.store.set_review_settings(replace(q.store.review_settings(), reviews_per_item=2))
    first = q.items[0]
    q.queue.decide(first, ACCEPT, "ann")
    if q.settles_alone:
        assert q.queue.counts()["accept"] == 1
        with pytest.raises(StoreError, match="already"):
            q.queue.decide(first, REJECT, "bob")  # settled: a second review is refused
        return
    assert q.queue.counts()["open"] == 3  # one of two reviews
    q.queue.decide(first, ACCEPT, "bob")
    assert q.queue.counts()["accept"] == 1


def test_reviewers_who_disagree_leave_a_conflict_that_a_lead_settles(q: Setup) -> None:
    first = q.items[0]
    if not q.settles_alone:
        q.store.set_review_settings(replace(q.store.review_settings(), reviews_per_item=2))
        q.queue.decide(first, ACCEPT, "ann")
        q.queue.decide(first, REJECT, "bob")
        assert q.queue.counts()["conflict"] == 1
        assert q.queue.first_in_state("conflict") == first
    q.queue.decide(first, REJECT, "lee", final=True)
    assert q.queue.counts()["reject"] == 1 and q.queue.first_in_state("conflict") is None
    assert q.queue.history(first)[-1].final


def test_undo_takes_back_the_reviewers_own_last_decision(q: Setup) -> None:
    first, second, _ = q.items
    q.queue.decide(first, ACCEPT, "ann")
    q.queue.decide(second, SKIP, "ann")
    assert q.queue.last_undoable("ann") == (second, q.queue.history(second)[0].event_id, "skip")
    assert q.queue.undo("ann")[0] == second
    assert q.queue.undo("ann")[0] == first  # repeated undos walk back
    assert q.queue.counts()["open"] == 3 and q.queue.last_undoable("ann") is None
    assert [e.undone for e in q.queue.history(first)] == [True, False]
    with pytest.raises(StoreError, match="no decision left to undo"):
        q.queue.undo("ann")
    # An undo in one queue never reaches into another's.
    other = next(k for k in KINDS if k != q.queue.name)
    assert q.store.queue(other).last_undoable("ann") is None


def test_a_lease_keeps_an_item_to_one_reviewer_until_it_expires(q: Setup) -> None:
    first, second, third = q.items
    assert q.queue.lease_next(None, "ann") == first
    assert q.queue.lease_next(None, "ann") == first  # a reload resumes it
    assert q.queue.lease_next(None, "bob") == second
    q.queue.release_leases("bob", [second])
    assert q.queue.lease_next(None, "cy") == second
    q.queue.take_lease(third, "dee")
    # Every lease runs out (ann's tab was closed): the first item is free again.
    q.store._write(
        lambda cur: cur.execute(
            "UPDATE leases SET expires_at = ?", [utc_now() - timedelta(minutes=1)]
        ),
        what="let the leases run out",
    )
    assert q.queue.lease_next(None, "eve") == first
    q.queue.decide(first, ACCEPT, "eve")
    q.queue.decide(second, ACCEPT, "eve")
    q.queue.decide(third, ACCEPT, "eve")
    assert q.queue.lease_next(None, "eve") is None  # nothing left for eve


def test_seen_and_progress_follow_the_reviewers_votes(q: Setup) -> None:
    first, second, _ = q.items
    assert q.queue.progress("ann") == (0, 3) and q.queue.seen("ann") == []
    q.queue.decide(first, ACCEPT, "ann")
    q.queue.decide(second, SKIP, "ann")
    assert q.queue.seen("ann") == [(first, "accept"), (second, "skip")]
    assert q.queue.progress("ann") == (2, 3)
    q.queue.undo("ann")
    assert q.queue.seen("ann") == [(first, "accept"), (second, None)]
    assert q.queue.progress("ann") == (1, 3)


def test_a_decision_from_an_out_of_date_card_is_refused(q: Setup) -> None:
    first = q.items[0]
    # The card showed no vote of ann's; another tab of hers decided since.
    q.queue.decide(first, SKIP, "ann", seen=None)
    with pytest.raises(StaleDecisionError):
        q.queue.decide(first, REJECT, "ann", seen=None)
    # The card showed the item at a version that was changed since (another tab's write).
    version = q.store._read(
        lambda cur: cur.execute(
            f"SELECT version FROM {q.queue.kind.table} WHERE {q.queue.kind.id_column} = ?",
            [q.items[1]],
        ).fetchall()[0][0]
    )
    q.queue.take_lease(q.items[1], "bob")
    with pytest.raises(StaleDecisionError, match="changed since it was shown"):
        q.queue.decide(q.items[1], ACCEPT, "ann", version=version)
    assert q.queue.counts()["open"] == 3


def test_a_bad_decision_is_refused_and_loses_nothing(q: Setup) -> None:
    with pytest.raises(StoreError, match="unknown decision"):
        q.queue.decide(q.items[0], "maybe", "ann")
    with pytest.raises(StoreError, match=f"no {q.queue.name} with id"):
        q.queue.decide("no-such-item", ACCEPT, "ann")
    with pytest.raises(StoreError, match="a reviewer name is needed"):
        q.queue.decide(q.items[0], ACCEPT, " ")
    assert q.queue.counts()["open"] == 3 and q.queue.history(q.items[0]) == ()


def test_a_lead_bulk_action_decides_the_open_items_and_one_undo_takes_it_back(q: Setup) -> None:
    first, *rest = q.items
    q.queue.decide(first, ACCEPT, "ann")
    plan = q.queue.bulk_plan(q.every, REJECT)
    assert plan.item_ids == tuple(rest) and plan.left_out == {"already decided": 1}
    batch, done = q.queue.bulk_decide(q.every, REJECT, "lee", expected=plan, reason="bad")
    assert done.item_ids == tuple(rest) and q.queue.last_undoable_batch("lee") == (batch, 2)
    assert q.queue.counts() == {"open": 0, "accept": 1, "reject": 2, "conflict": 0}
    assert all(q.queue.history(i)[-1].batch_id == batch for i in rest)
    q.queue.undo("lee")
    assert q.queue.counts()["open"] == 2 and q.queue.last_undoable_batch("lee") is None
    # A plan confirmed before the queue changed decides nothing.
    stale = q.queue.bulk_plan(q.every, REJECT)
    q.queue.decide(rest[0], ACCEPT, "ann")
    with pytest.raises(StaleDecisionError):
        q.queue.bulk_decide(q.every, REJECT, "lee", expected=stale)


def test_what_blocks_an_accept_is_said_before_and_refused_at_the_decision(q: Setup) -> None:
    assert q.queue.accept_blocker(q.items[0]) is None
    make = BLOCKED.get(q.queue.name)
    if make is None:
        assert q.queue.kind.accept_blocker is None
        return
    blocked = make(q.store)
    why = q.queue.accept_blocker(blocked)
    assert why
    with pytest.raises(StoreError) as refused:
        q.queue.decide(blocked, ACCEPT, "ann")
    assert str(refused.value) == why
    assert blocked not in q.queue.bulk_plan(q.every, ACCEPT).item_ids
    q.queue.decide(blocked, REJECT, "ann")  # a reject is never blocked


def test_a_browsed_state_steps_through_its_items_in_queue_order_and_wraps(q: Setup) -> None:
    first, second, third = q.items
    q.queue.decide(first, ACCEPT, "ann")
    q.queue.decide(third, ACCEPT, "ann")
    if not q.settles_alone:  # two reviews: ann's accepts leave them open for a second reviewer
        q.queue.decide(first, ACCEPT, "bob")
        q.queue.decide(third, ACCEPT, "bob")
    accepted = q.queue.kind.filters(decision=DecisionState.ACCEPTED)
    assert q.queue.browse(accepted) == first
    assert q.queue.browse(accepted, first) == third
    assert q.queue.browse(accepted, third) == first  # round to the start
    assert q.queue.browse(accepted, second) == third  # after an item that is not among them
    assert q.queue.place(accepted, third) == (2, 2)
    assert q.queue.place(accepted, second) == (None, 2)  # not among them, still counted
    assert q.queue.place(q.every, second) == (2, 3)
    none = q.queue.kind.filters(decision=DecisionState.CONFLICT)
    assert q.queue.browse(none) is None and q.queue.place(none, first) == (None, 0)
    # Browsing leases nothing: the reviewer's next to do is still the open item.
    assert q.queue.lease_next(None, "cid") == second
