"""What reviewers expect from the tools they already use (issue 29), walked in a real browser:
guidelines set on Overview and shown folded on the card, a lead's bulk action with its count,
confirmation and undo, and search over blueprints and proposals. One store for the file, on the
session's shared server; each test on its own page and its own reviewer name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser_support import (
    BROWSER_MARKS,
    UI_TIMEOUT_MS,
    SharedStudio,
    Studio,
    open_page,
    settle,
)
from playwright.sync_api import Browser, Page, expect

from codesearch_core import ingest, studio
from codesearch_core.engines.mutations import MutationEngine
from codesearch_core.models import Proposal
from codesearch_core.store import BlueprintFilters, Store
from codesearch_core.verify import verify_pending

pytestmark = BROWSER_MARKS

#: Text only a pattern holds (no intent says it): the search matches the call, not only the words.
PATTERN_TEXT = "$$$ARGS"
SEEDED: dict[str, int] = {}
ITEM = re.compile(r"Item \d+ of (\d+)")


def _seed(db: Path) -> None:
    """The shipped seeds; the first four blueprints' reference calls as proposals (they run and
    grade perfect) and two mutations of each of the next two; guidelines v1."""
    with Store(db) as store:
        ingest.ensure_seeded(store)
        blueprints = studio.all_blueprints(store, BlueprintFilters(), limit=1000)[:6]
        store.add_proposals(
            [
                Proposal(bp.id, "import", "reference", bp.reference_call.to_json(),
                         bp.reference_call, True)
                for bp in blueprints[:4]
            ]
        )  # fmt: skip
        studio.propose_into_store(store, MutationEngine(), blueprints[4:], n=2)
        verify_pending(store, workers=1)
        store.guidelines.save("# Guidelines\n\nAccept a call only when it finds what is asked.")
        SEEDED["blueprints"] = store.blueprints.list(limit=0).total
        SEEDED["matching"] = store.blueprints.list(
            BlueprintFilters(text=PATTERN_TEXT), limit=0
        ).total


@pytest.fixture(scope="module")
def server(shared_studio: SharedStudio, tmp_path_factory: pytest.TempPathFactory) -> Studio:
    """The session's server on this file's store (no test of another file runs in between)."""
    db = tmp_path_factory.mktemp("studio") / "studio.duckdb"
    _seed(db)
    return shared_studio.serve(db)


def _type_then_click_away(page: Page, box: str, text: str) -> None:
    """Type key by key, as a person does, then click elsewhere: no Enter."""
    field = page.get_by_role("textbox", name=box)
    field.click()
    field.press_sequentially(text, delay=15)
    page.locator("h1").first.click()
    settle(page)


def test_a_lead_sets_guidelines_v2_a_reviewer_sees_them_on_the_card_and_the_history_keeps_v2(
    server: Studio, browser: Browser
) -> None:
    lead = open_page(browser, f"{server.url}/?reviewer=lee")
    lead.get_by_text("v1 · saved by").wait_for()
    box = lead.get_by_role("textbox", name="Guidelines (Markdown)")
    box.click()
    box.press("Control+End")
    box.press_sequentially("\n\nReject a call that needs a second search.", delay=5)
    lead.get_by_role("button", name="Save as a new version").click()
    lead.get_by_text("Saved as v2").wait_for()
    lead.get_by_text("v2 · saved by").wait_for()

    page = open_page(browser, f"{server.url}/review?reviewer=rae")
    fold = page.get_by_text("Guidelines v2")
    fold.click()  # folded until opened
    page.get_by_text("Reject a call that needs a second search.").wait_for()
    heading = page.get_by_text(ITEM).first
    text = heading.inner_text()
    heading.click()  # the focus off the fold's summary, onto the card, as a reviewer's click does
    settle(page)
    page.keyboard.press("s")  # decide by key
    expect(page.get_by_text(ITEM).first).not_to_have_text(text, timeout=UI_TIMEOUT_MS)
    page.go_back()  # the item just decided, as it is (issue 29: Back)
    settle(page)
    page.get_by_text("History and raw output").click()
    page.get_by_text("Decided under guidelines v2").wait_for()


def test_a_lead_accepts_the_perfect_items_of_the_filter_as_one_batch_and_undoes_it(
    server: Studio, browser: Browser
) -> None:
    page = open_page(browser, f"{server.url}/review?reviewer=lee&decision=undecided")
    page.get_by_text("Bulk actions (lead)").click()
    summary = page.get_by_text(re.compile(r"^\d+ will be accepted")).first
    n = int(summary.inner_text().split()[0])
    assert n >= 1  # reference calls that ran and graded perfect
    accept = page.get_by_role("button", name=f"Accept {n} perfect items")
    expect(accept).to_be_disabled()  # confirmed first
    confirm = page.get_by_text(f"Yes, accept these {n}")
    confirm.click()
    settle(page)
    accept.click()
    page.get_by_text(f"Accepted {n} items as one batch.").wait_for()
    page.get_by_text(re.compile(r"^0 will be accepted")).first.wait_for()
    undo = page.get_by_role("button", name=f"Undo batch ({n} items)")
    undo.focus()
    undo.press("Enter")  # the keyboard works as well as the mouse
    page.get_by_text("Batch undone").wait_for()
    page.get_by_text(f"{n} will be accepted").first.wait_for()


def test_search_narrows_the_blueprint_list_and_the_review_queue_without_enter(
    server: Studio, browser: Browser
) -> None:
    page = open_page(browser, f"{server.url}/blueprints?reviewer=sam")
    page.get_by_text(f"{SEEDED['blueprints']} blueprints match").wait_for()
    _type_then_click_away(page, "Search", PATTERN_TEXT)
    assert 0 < SEEDED["matching"] < SEEDED["blueprints"]
    page.get_by_text(f"{SEEDED['matching']} blueprints match").wait_for()

    review = open_page(browser, f"{server.url}/review?reviewer=sam&decision=any")
    total = int(ITEM.search(review.get_by_text(ITEM).first.inner_text()).group(1))  # type: ignore[union-attr]
    review.get_by_text("Queue filters").click()
    _type_then_click_away(review, "Search", PATTERN_TEXT)
    assert "text=" in review.url  # the address keeps the search
    narrowed = int(ITEM.search(review.get_by_text(ITEM).first.inner_text()).group(1))  # type: ignore[union-attr]
    assert 0 < narrowed < total
