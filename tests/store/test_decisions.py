"""Several reviewers at once: each one's decision kept as theirs, items resolved by enough agreeing
reviews or a lead, conflicts, undo of one's own decisions, leases, and stale tabs."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from store_helpers import (
    blueprint,
    executed,
    finding,
    invalid_proposal,
    proposal,
    reward,
    run_failed,
    run_ok,
)

from codesearch_core.errors import StoreError
from codesearch_core.models import DecisionAction, Span
from codesearch_core.store import PROPOSAL
from codesearch_core.store import decisions as store_decisions
from codesearch_core.store.core import Store
from codesearch_core.store.filters import QueueFilters
from codesearch_core.store.rows import utc_now
from codesearch_core.store.types import DecisionState, ReviewSettings, StaleDecisionError


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "studio.duckdb") as s:
        yield s


@pytest.fixture
def items(store: Store) -> list[str]:
    """Six proposals that ran without an error (so they can be accepted)."""
    bps = [blueprint(i) for i in range(3)]
    store.blueprints.add(bps)
    ids = store.add_proposals([proposal(bp, p) for bp in bps for p in ("a", "b")])
    executed(store, ids)
    return ids


def _state(store: Store, item: str) -> str | None:
    found = store.review_item(item)
    assert found is not None
    return found.state


def test_a_later_reviewer_never_replaces_an_earlier_ones_decision(
    store: Store, items: list[str]
) -> None:
    """Bug 3: ann's accepts became bob's rejects, and nobody was told."""
    for item in items:
        store.queue(PROPOSAL).decide(item, "accept", "ann")
        store.queue(PROPOSAL).decide(item, "reject", "bob")
    for item in items:
        found = store.review_item(item)
        assert found is not None
        assert dict(found.votes) == {
            "ann": ("accept", found.votes["ann"][1]),
            "bob": ("reject", found.votes["bob"][1]),
        }
        assert found.state == "conflict"  # disagreement is shown, not settled by the last click
    assert store.review_queue(QueueFilters(decision=DecisionState.CONFLICT)).total == len(items)
    assert store.counts().accepted == 0


def test_an_item_is_resolved_by_the_reviews_it_needs_when_they_agree(
    store: Store, items: list[str]
) -> None:
    store.set_review_settings(ReviewSettings(reviews_per_item=2))
    a, b = items[0], items[1]
    store.queue(PROPOSAL).decide(a, "accept", "ann")
    assert _state(store, a) is None  # one review of two: still open
    store.queue(PROPOSAL).decide(a, "skip", "cid")  # a skip is no review
    assert _state(store, a) is None
    store.queue(PROPOSAL).decide(a, "accept", "bob")
    assert _state(store, a) == "accept"
    store.queue(PROPOSAL).decide(b, "accept", "ann")
    store.queue(PROPOSAL).decide(b, "reject", "bob")
    assert _state(store, b) == "conflict"
    # A lead's final decision settles the conflict; undoing it brings the conflict back.
    final = store.queue(PROPOSAL).decide(b, "reject", "lee", note="pattern too loose", final=True)
    assert _state(store, b) == "reject"
    current = store.current_decision(b)
    assert current is not None and current.event_id == final and current.final
    store.queue(PROPOSAL).undo("lee")
    assert _state(store, b) == "conflict"
    assert store.check_caches() == []


def test_changing_the_reviews_per_item_restates_every_item(store: Store, items: list[str]) -> None:
    store.queue(PROPOSAL).decide(items[0], "accept", "ann")
    store.queue(PROPOSAL).decide(items[1], "reject", "bob")
    assert _state(store, items[0]) == "accept"
    # The preview says what the change would do and changes nothing (issue 39: said before the
    # save); the change says what it did: two settled items open again, then settled again.
    assert store.preview_review_settings(ReviewSettings(reviews_per_item=2)) == {"proposal": 2}
    assert _state(store, items[0]) == "accept" and store.review_settings().reviews_per_item == 1
    assert store.set_review_settings(ReviewSettings(reviews_per_item=2)) == {"proposal": 2}
    assert _state(store, items[0]) is None
    assert store.set_review_settings(ReviewSettings(reviews_per_item=1)) == {"proposal": -2}
    assert _state(store, items[0]) == "accept"
    assert store.set_review_settings(ReviewSettings(reviews_per_item=1, lease_minutes=9)) == {}

    with pytest.raises(StoreError, match="between 1 and 20"):
        store.set_review_settings(ReviewSettings(reviews_per_item=0))


def test_undo_undoes_only_your_own_decisions_and_walks_back_across_items(
    store: Store, items: list[str]
) -> None:
    store.set_review_settings(ReviewSettings(reviews_per_item=2))
    store.queue(PROPOSAL).decide(items[0], "accept", "ann")
    store.queue(PROPOSAL).decide(items[1], "reject", "ann")
    store.queue(PROPOSAL).decide(items[0], "accept", "bob")
    with pytest.raises(StoreError, match="cid has no decision left to undo"):
        store.queue(PROPOSAL).undo("cid")
    assert store.queue(PROPOSAL).last_undoable("ann") == (items[1], 2, "reject")
    assert store.queue(PROPOSAL).undo("ann")[0] == items[1]  # the newest first, across items
    assert store.queue(PROPOSAL).undo("ann")[0] == items[0]
    found = store.review_item(items[0])
    assert found is not None and set(found.votes) == {"bob"}  # bob's vote untouched
    with pytest.raises(StoreError, match="ann has no decision left to undo"):
        store.queue(PROPOSAL).decide(items[0], "undo", "ann")
    assert store.check_caches() == []


def test_a_decision_from_an_out_of_date_tab_is_refused(store: Store, items: list[str]) -> None:
    """Two tabs of one reviewer show the same item; the second click must not decide it again."""
    store.queue(PROPOSAL).decide(items[0], "accept", "ann", seen=None)  # tab 1
    with pytest.raises(StaleDecisionError, match="already decided this item elsewhere"):
        store.queue(PROPOSAL).decide(items[0], "reject", "ann", seen=None)  # tab 2, drawn before
    found = store.review_item(items[0])
    assert found is not None and len(found.history) == 1
    # Changing one's mind on purpose names the vote one saw.
    vote = found.vote_of("ann")
    assert vote is not None
    store.queue(PROPOSAL).decide(items[0], "reject", "ann", seen=vote[1])
    assert _state(store, items[0]) == "reject"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "a reviewer name is needed"),
        ("   ", "a reviewer name is needed"),
        ("x" * 81, "at most 80 characters"),
        ("ann\nbob", "control characters"),
        ("ann\x1b[31m", "control characters"),
        ("ann\u202e", "control characters"),
    ],
)
def test_a_bad_reviewer_name_is_refused_with_the_reason(
    store: Store, items: list[str], name: str, message: str
) -> None:
    with pytest.raises(StoreError, match=message):
        store.queue(PROPOSAL).decide(items[0], "accept", name)
    with pytest.raises(StoreError, match=message):
        store.queue(PROPOSAL).lease_next(None, name)
    assert store.queue(PROPOSAL).history(items[0]) == ()


def test_only_a_call_that_ran_without_an_error_can_be_accepted(store: Store) -> None:
    """Bug 4: a failed call was stored with Accept enabled, and exported once accepted."""
    bp = blueprint(1)
    store.blueprints.add([bp])
    failed, pending, invalid = store.add_proposals(
        [proposal(bp, "a"), proposal(bp, "b"), invalid_proposal(bp)]
    )
    store.record_execution_and_grade(failed, run_failed(), None, reward(-1.0))
    for item, message in (
        (failed, "has not run without an error"),
        (pending, "has not run without an error"),
        (invalid, "no valid tool call"),
    ):
        with pytest.raises(StoreError, match=message):
            store.queue(PROPOSAL).decide(item, "accept", "ann")
        store.queue(PROPOSAL).decide(item, "reject", "ann")
    assert store.counts().rejected == 3


def test_an_item_shown_to_one_reviewer_is_not_shown_to_another(
    store: Store, items: list[str]
) -> None:
    first = store.queue(PROPOSAL).lease_next(None, "ann")
    assert first == items[0]
    assert (
        store.queue(PROPOSAL).lease_next(None, "ann") == items[0]
    )  # a reload resumes the same item
    assert store.queue(PROPOSAL).lease_next(None, "bob") == items[1]
    store.queue(PROPOSAL).decide(items[0], "accept", "ann")
    assert store.queue(PROPOSAL).lease_next(None, "ann") == items[2]
    # With two reviews per item, an item goes to two reviewers: ann's accepted item needs one more.
    store.set_review_settings(ReviewSettings(reviews_per_item=2))
    assert store.queue(PROPOSAL).lease_next(None, "cid") == items[0]  # ann's vote + cid's lease = 2
    assert store.queue(PROPOSAL).lease_next(None, "dan") == items[1]  # bob's lease + dan's = 2
    assert store.queue(PROPOSAL).lease_next(None, "fay") == items[2]  # ann's lease + fay's = 2
    # "To do" counts follow the same rule: the first three are taken up to their reviews.
    assert store.review_queue(QueueFilters(reviewer="eve")).total == len(items) - 3


def test_a_lease_expires(store: Store, items: list[str]) -> None:
    store.set_review_settings(ReviewSettings(lease_minutes=1))
    assert store.queue(PROPOSAL).lease_next(None, "ann") == items[0]
    assert store.queue(PROPOSAL).lease_next(None, "bob") == items[1]
    later = utc_now() + timedelta(minutes=2)

    def lease_later(who: str) -> str | None:
        return store._write(
            lambda cur: store_decisions.lease_next(
                cur, QueueFilters(), who, now=later, kind=PROPOSAL
            ),
            what="lease",
        )

    assert lease_later("bob") == items[0]  # ann's tab was closed: her lease ran out
    store.queue(PROPOSAL).release_leases("bob")  # bob leaves: both his leases go
    assert lease_later("cid") == items[0]
    # Now (not later) ann's lease still holds items[0], and so does cid's: one item is taken.
    assert store.review_queue(QueueFilters(reviewer="dan")).total == len(items) - 1


def test_two_reviewers_asking_at_once_get_different_items(store: Store, items: list[str]) -> None:
    got: dict[str, str | None] = {}
    barrier = threading.Barrier(4)

    def ask(name: str) -> None:
        barrier.wait()
        got[name] = store.queue(PROPOSAL).lease_next(None, name)

    threads = [threading.Thread(target=ask, args=(n,)) for n in ("ann", "bob", "cid", "dan")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(v for v in got.values() if v) == sorted(items[:4])


def test_the_dashboard_counts_each_reviewer_and_their_agreement(
    store: Store, items: list[str]
) -> None:
    store.set_review_settings(ReviewSettings(reviews_per_item=2))
    for item, (ann, bob) in zip(
        items,
        [("accept", "accept"), ("reject", "reject"), ("accept", "reject"), ("accept", "accept")],
        strict=False,
    ):
        store.queue(PROPOSAL).decide(item, ann, "ann")
        store.queue(PROPOSAL).decide(item, bob, "bob")
    store.queue(PROPOSAL).decide(items[4], "skip", "ann")
    stats = store.dashboard_stats()
    assert stats.reviewers == (("ann", 3, 1, 1), ("bob", 2, 2, 0))
    assert stats.agreement.items == 4
    assert stats.agreement.percent == pytest.approx(0.75)
    # Krippendorff's alpha by hand (nominal): 8 paired values, 5 accepts and 3 rejects; one item
    # disagrees, giving 2 off-diagonal coincidences: 1 - (8 - 1) * 2 / (2 * 5 * 3) = 8/15.
    assert stats.agreement.alpha == pytest.approx(8 / 15)
    assert stats.agreement.conflicts == 1
    assert stats.counts.conflicts == 1
    assert stats.review_settings.reviews_per_item == 2


def test_a_verify_that_overlapped_an_edit_does_not_write_a_stale_grade(
    store: Store, items: list[str]
) -> None:
    """Bug 12: a grade computed against a blueprint's old expected spans was written after the
    blueprint was edited."""
    bp = blueprint(9)
    store.blueprints.add([bp])
    [pid] = store.add_proposals([proposal(bp, "x")])
    [pending] = store.pending_verification()
    store.blueprints.upsert(replace(bp, expected=(Span("src/app.py", 30, 31),)))
    stale = store.record_executions_and_grades(
        [(pid, run_ok(finding()), None, reward(0.0))],
        graded_against={pid: pending.grading_key},
    )
    assert stale == [pid]
    assert [p.proposal_id for p in store.pending_verification()] == [pid]


def test_decisions_keep_their_reviewer_and_undo_names_its_target(
    store: Store, items: list[str]
) -> None:
    event = store.queue(PROPOSAL).decide(
        items[0], DecisionAction.REJECT, "ann", reason="wrong tool"
    )
    _, undo = store.queue(PROPOSAL).undo("ann")
    history = store.queue(PROPOSAL).history(items[0])
    assert [(e.event_id, e.action, e.reviewer, e.undone) for e in history] == [
        (event, DecisionAction.REJECT, "ann", True),
        (undo, DecisionAction.UNDO, "ann", False),
    ]
    assert history[1].undoes == event


@pytest.mark.parametrize(
    ("args", "message"),
    [(("approve", "ann"), "unknown decision"), (("accept", "  "), "a reviewer name is needed")],
)
def test_bad_decisions_are_refused(
    store: Store, items: list[str], args: tuple[str, str], message: str
) -> None:
    with pytest.raises(StoreError, match=message):
        store.queue(PROPOSAL).decide(items[0], *args)
    assert store.queue(PROPOSAL).history(items[0]) == ()


def test_a_decision_on_an_unknown_item_is_refused(store: Store) -> None:
    with pytest.raises(StoreError, match="no proposal"):
        store.queue(PROPOSAL).decide("missing", "accept", "ann")


def test_decision_events_are_never_rewritten_and_keep_their_note(
    store: Store, items: list[str]
) -> None:
    store.queue(PROPOSAL).decide(items[0], "accept", "ann", note="looks right")
    before = store.queue(PROPOSAL).history(items[0])
    store.queue(PROPOSAL).undo("ann")
    store.queue(PROPOSAL).decide(items[0], "reject", "ann", reason="wrong tool")
    after = store.queue(PROPOSAL).history(items[0])
    assert after[: len(before)] == tuple(replace(e, undone=True) for e in before)
    assert after[0].note == "looks right" and after[-1].reason == "wrong tool"
    assert store.counts().decision_events == 3
    assert store.check_caches() == []
