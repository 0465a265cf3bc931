"""Conflicts as an entry of the Review page's queue picker (issue 39, item 4), in a real browser:
a lead opens it from the picker, settles the proposals in conflict and then the episode in
conflict with the keys (X final reject, A final accept), a reload on the way keeps the entry and
the card, and the entry ends with nothing in conflict. Every final decision is the store's."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from browser_support import BROWSER_MARKS, Studio, open_page, settle
from playwright.sync_api import Browser, Page

from codesearch_core import ingest, studio
from codesearch_core.gym import ReferencePolicy, as_tasks, rollouts, seed_blueprints
from codesearch_core.models import DecisionAction, Proposal
from codesearch_core.store import (
    EPISODE,
    PROPOSAL,
    BlueprintFilters,
    DecisionState,
    QueueFilters,
    ReviewSettings,
    Store,
)
from codesearch_core.verify import verify_pending

pytestmark = BROWSER_MARKS


def _disagree(store: Store, kind: str, item_id: str) -> None:
    store.queue(kind).decide(item_id, DecisionAction.ACCEPT, "ann")
    store.queue(kind).decide(item_id, DecisionAction.REJECT, "bob")


def _store_in_conflict(db: Path) -> tuple[list[str], str]:
    """Two proposals (reference calls that ran) and one of two episodes in conflict: ann accepted
    and bob rejected each, with two reviews an item."""
    with Store(db) as store:
        ingest.ensure_seeded(store)
        blueprints = studio.all_blueprints(store, BlueprintFilters(), limit=2)
        store.add_proposals([
            Proposal(bp.id, "import", "reference", bp.reference_call.to_json(), bp.reference_call,
                     True)
            for bp in blueprints
        ])  # fmt: skip
        verify_pending(store, workers=1)
        webshop = [b for b in seed_blueprints() if b.corpus == "webshop" and b.plan is None][:2]
        rollouts(ReferencePolicy(), as_tasks(webshop).tasks, store, k=1)
        store.set_review_settings(ReviewSettings(reviews_per_item=2))
        proposals = [i.proposal_id for i in store.review_queue(
            QueueFilters(decision=DecisionState.ANY)).items]  # fmt: skip
        episode = store.episodes.list()[0].episode_id
        for pid in proposals:
            _disagree(store, PROPOSAL, pid)
        _disagree(store, EPISODE, episode)
    return proposals, episode


def _press(page: Page, key: str, then: str) -> None:
    settle(page)
    page.locator("body").press(key)
    page.get_by_text(then).first.wait_for()
    settle(page)


def test_a_lead_settles_every_queues_conflicts_from_the_picker_by_keys(
    start_studio: Callable[[], Studio], browser: Browser, tmp_path: Path
) -> None:
    proposals, episode = _store_in_conflict(tmp_path / "studio.duckdb")
    server = start_studio()
    page = open_page(browser, f"{server.url}/review?reviewer=lee")
    page.locator('[data-testid="stButtonGroup"]').get_by_text("Conflicts (3)").click()
    page.get_by_text("In conflict: Proposals 2 · Episodes 1").wait_for()
    settle(page)
    assert "queue=conflicts" in page.url
    page.get_by_text("Conflict 1 of 2").first.wait_for()  # counted among the conflicts
    page.get_by_text("X final reject").first.wait_for()
    _press(page, "x", "Final: Rejected")
    page.get_by_text("Conflict 1 of 1").first.wait_for()

    page.reload()  # the address keeps the entry and the card
    settle(page)
    page.get_by_text("Conflict 1 of 1").first.wait_for()
    assert "queue=conflicts" in page.url
    # The proposals' last conflict: the next queue's conflict comes to the card by itself.
    _press(page, "a", "Reviewers disagree on this episode")
    assert re.search(r"Conflict 1 of 1", page.inner_text('[data-testid="stMain"]'))
    _press(page, "a", "No item is in conflict.")

    with Store(server.db) as store:
        assert store.queue(PROPOSAL).counts()["conflict"] == 0
        assert store.queue(EPISODE).counts() == {"open": 1, "accept": 1, "reject": 0,
                                                  "conflict": 0}  # fmt: skip
        finals = [(e.item_id, e.action, e.final) for e in store.queue(PROPOSAL).history(proposals[0])
                  if e.final]  # fmt: skip
        assert finals == [(proposals[0], DecisionAction.REJECT, True)]
        settled = [store.review_item(pid) for pid in proposals]
        assert [i.state if i else None for i in settled] == ["reject", "accept"]
        assert [e.reviewer for e in store.queue(EPISODE).history(episode) if e.final] == ["lee"]
