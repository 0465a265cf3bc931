"""The Review page's queue picker (`pages/_queues.py`): a button per kind of the store's registry,
each with its open items, and each kind's queue drawn by its own page module, in the address."""

from __future__ import annotations

from pathlib import Path

from app_support import open_app, seed_reviewable, stored

from codesearch_core import studio
from codesearch_core.store import KINDS, PROPOSAL

REVIEW = "pages/review.py"


def test_the_picker_offers_every_kind_of_the_registry_and_draws_each_in_the_address(
    studio_db: Path, reviewable_template: Path
) -> None:
    seed_reviewable(studio_db, reviewable_template)
    with stored(studio_db) as store:
        open_items = {kind: store.queue(kind).counts()["open"] for kind in KINDS}
    at = open_app(REVIEW, reviewer="ann")
    picker = at.segmented_control(key="review:queue")
    names = [studio.QUEUE_NAMES[kind] for kind in KINDS]
    # Proposals is the page's own queue (its count is the card's); every other kind says its open.
    assert picker.options == [
        name if kind == PROPOSAL else f"{name} ({open_items[kind]})"
        for kind, name in zip(KINDS, names, strict=True)
    ]
    for name in names:
        picker.set_value(name).run()
        assert not at.exception, (name, at.exception)
        expected = None if name == studio.QUEUE_NAMES[PROPOSAL] else name.lower()
        assert at.query_params.get("queue") == expected, name
        # Each queue draws its own caption or card under the picker, not the proposals' filters.
        filters = [e for e in at.expander if e.label == "Queue filters"]
        assert bool(filters) == (expected is None), name
