"""The Review page's queue picker (`pages/_queues.py`): a button per kind of the store's registry,
each with its open items, and each kind's queue drawn by its own page module, in the address; and
Conflicts, every queue's items in conflict, settled by a lead's final decisions."""

from __future__ import annotations

from pathlib import Path

from app_support import open_app, seed_reviewable, stored, texts

from codesearch_core import studio
from codesearch_core.models import DecisionAction
from codesearch_core.store import EPISODE, KINDS, PROPOSAL, QA, ReviewSettings

REVIEW = "pages/review.py"
CONFLICTS = "Conflicts"


def test_the_picker_offers_every_kind_of_the_registry_and_conflicts_and_draws_each_in_the_address(
    studio_db: Path, reviewable_template: Path
) -> None:
    seed_reviewable(studio_db, reviewable_template)
    with stored(studio_db) as store:
        counts = {kind: store.queue(kind).counts() for kind in KINDS}
    at = open_app(REVIEW, reviewer="ann")
    picker = at.segmented_control(key="review:queue")
    names = [studio.QUEUE_NAMES[kind] for kind in KINDS]
    in_conflict = sum(counts[kind]["conflict"] for kind in (PROPOSAL, EPISODE, QA))
    # Every queue says its open items; Conflicts, second, every queue's items in conflict.
    labels = [f"{name} ({counts[kind]['open']})" for kind, name in zip(KINDS, names, strict=True)]
    assert picker.options == [labels[0], f"{CONFLICTS} ({in_conflict})", *labels[1:]]
    for name in [names[0], CONFLICTS, *names[1:]]:
        picker.set_value(name).run()
        assert not at.exception, (name, at.exception)
        expected = None if name == studio.QUEUE_NAMES[PROPOSAL] else name.lower()
        assert at.query_params.get("queue") == expected, name
        # Each queue draws its own caption or card under the picker, not the proposals' filters.
        filters = [e for e in at.expander if e.label == "Queue filters"]
        assert bool(filters) == (expected is None), name
    picker.set_value(CONFLICTS).run()
    assert "No item is in conflict." in texts(at, "success")


def test_conflicts_is_the_proposals_in_conflict_settled_by_the_leads_final_decision(
    studio_db: Path, reviewable_template: Path
) -> None:
    ids = seed_reviewable(studio_db, reviewable_template)
    with stored(studio_db) as store:
        store.set_review_settings(ReviewSettings(reviews_per_item=2))
        disputed = ids[1]
        store.queue(PROPOSAL).decide(disputed, DecisionAction.ACCEPT, "ann")
        store.queue(PROPOSAL).decide(disputed, DecisionAction.REJECT, "bob")
    at = open_app(REVIEW, reviewer="lee")
    picker = at.segmented_control(key="review:queue")
    assert f"{CONFLICTS} (1)" in picker.options
    picker.set_value(CONFLICTS).run()
    assert not at.exception, at.exception
    assert any("Conflict 1 of 1 · 1 in conflict" in t for t in texts(at, "markdown"))
    assert at.query_params.get("item") == disputed
    # The card's X is the lead's final reject; the entry then has nothing left.
    final_reject = next(b for b in at.button if str(b.label).startswith("Final: reject"))
    final_reject.click().run()
    assert not at.exception, at.exception
    with stored(studio_db) as store:
        item = store.review_item(disputed)
        assert item is not None and item.state == "reject"
        assert item.decision is not None and item.decision.final and item.decision.reviewer == "lee"
    at.run()
    assert "No item is in conflict." in texts(at, "success")
