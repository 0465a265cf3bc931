"""The studio in a real browser: `streamlit run app.py` on a loopback port, driven by Playwright in
Debian's Chromium. Keyboard shortcuts, a dataframe row selection and the first-start loop are checked
against the store itself; every page is saved as a screenshot under docs/screenshots/.

The store is checked after the server is stopped: DuckDB lets one process hold the file.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from browser_support import (
    BROWSER_MARKS,
    SCREENSHOTS,
    Studio,
    accept_enabled,
    open_page,
    settle,
)
from playwright.sync_api import Browser, Page

from codesearch_core import ingest, studio
from codesearch_core.engines.mutations import MutationEngine
from codesearch_core.models import DecisionAction
from codesearch_core.store import PROPOSAL
from codesearch_core.store.core import Store
from codesearch_core.store.types import BlueprintFilters
from codesearch_core.verify.pending import verify_pending

pytestmark = BROWSER_MARKS


def _seed_proposals(db: Path, per_blueprint: int = 2) -> None:
    """A store with the shipped seeds, mutation proposals, all executed and graded."""
    with Store(db) as store:
        ingest.ensure_seeded(store)
        blueprints = studio.all_blueprints(store, BlueprintFilters(), limit=1000)
        studio.propose_into_store(store, MutationEngine(), blueprints, n=per_blueprint)
        verify_pending(store, workers=1)


def _wait_for_card(page: Page, position: str) -> None:
    """Wait for the review card at `position`, with its buttons ready for a shortcut."""
    page.wait_for_selector(f"text={position}")
    page.get_by_role("button", name="Reject").wait_for()
    page.wait_for_function(
        """() => [...document.querySelectorAll('button')]
            .some(b => b.innerText.includes('Reject') && !b.disabled)"""
    )
    settle(page)


def _screenshot(page: Page, name: str) -> None:
    """The whole page: the viewport is grown to the main area's height, which scrolls by itself."""
    height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": 1440, "height": max(900, min(int(height) + 40, 3200))})
    settle(page)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))
    page.set_viewport_size({"width": 1440, "height": 1000})


def _main_text(page: Page) -> str:
    return str(page.inner_text('[data-testid="stMain"]'))


@pytest.fixture(scope="module", name="proposals_store")
def proposals_store_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once for the file's review walks, each of which decides on a copy: running and
    grading every seed's proposals is the slowest step of either walk."""
    db = tmp_path_factory.mktemp("proposals") / "studio.duckdb"
    _seed_proposals(db)
    return db


def _review_as_ann(
    start_studio: Callable[[], Studio], browser: Browser, tmp_path: Path, proposals_store: Path
) -> tuple[Studio, Page, list[str]]:
    """A seeded studio with ann's Review page on its first card; the queue's first item ids."""
    shutil.copyfile(proposals_store, tmp_path / "studio.duckdb")
    with Store(tmp_path / "studio.duckdb") as store:
        queue = [i.proposal_id for i in store.review_queue(limit=10).items]
    server = start_studio()
    page = open_page(browser, f"{server.url}/review?reviewer=ann")
    _wait_for_card(page, "Item 1 of")
    return server, page, queue


def test_review_shortcuts_record_accept_reject_skip_and_undo(
    start_studio: Callable[[], Studio], browser: Browser, tmp_path: Path, proposals_store: Path
) -> None:
    server, page, queue = _review_as_ann(start_studio, browser, tmp_path, proposals_store)
    pressed = []
    for key, expected_item in (("a", "Item 2 of"), ("x", "Item 3 of"), ("s", "Item 4 of")):
        # Shortcuts are ignored while a text field has the focus: click the page title first.
        page.locator("h1").first.click()
        # A call whose run failed cannot be accepted (Accept is disabled): reject it instead.
        key = key if key != "a" or accept_enabled(page) else "x"
        pressed.append(key)
        page.keyboard.press(key)
        _wait_for_card(page, expected_item)
    settle(page)  # a key pressed while a run still draws the card can be lost
    page.keyboard.press("u")
    _wait_for_card(page, "Item 3 of")
    settle(page)
    server.stop()

    with Store(server.db) as store:
        events = [
            (e.item_id, e.action, e.reviewer, e.undone)
            for item in queue[:3]
            for e in store.queue(PROPOSAL).history(item)
        ]
        first = DecisionAction.ACCEPT if pressed[0] == "a" else DecisionAction.REJECT
        assert events == [
            (queue[0], first, "ann", False),
            (queue[1], DecisionAction.REJECT, "ann", False),
            (queue[2], DecisionAction.SKIP, "ann", True),
            (queue[2], DecisionAction.UNDO, "ann", False),
        ]
        assert store.current_decision(queue[2]) is None


def test_letters_typed_in_the_note_stay_there_and_enter_or_esc_hand_the_keys_back(
    start_studio: Callable[[], Studio], browser: Browser, tmp_path: Path, proposals_store: Path
) -> None:
    """Bug 6 of the review issue: a reviewer typed a note, then pressed A to accept; the "a" went
    into the note ("keyboard-note-1aa") and nothing was decided. Letters in the field are the
    note's; Enter or Esc keeps the note and gives the keys back to the card."""
    server, page, queue = _review_as_ann(start_studio, browser, tmp_path, proposals_store)
    note = page.get_by_role("textbox", name="Note")
    note.click()
    page.keyboard.type("keyboard-note-1 ax")  # letters that are also shortcuts, typed in the field
    settle(page)
    assert "Item 1 of" in _main_text(page)  # nothing was decided
    page.keyboard.press("Enter")
    settle(page)
    page.keyboard.press("x")
    _wait_for_card(page, "Item 2 of")
    note = page.get_by_role("textbox", name="Note")
    note.click()
    page.keyboard.type("second")
    page.keyboard.press("Escape")
    settle(page)
    page.keyboard.press("s")
    _wait_for_card(page, "Item 3 of")

    with Store(server.db) as store:  # the studio lets go of an idle store: no need to stop it
        events = [
            (e.item_id, e.action, e.note)
            for item in queue[:2]
            for e in store.queue(PROPOSAL).history(item)
        ]
    assert events == [
        (queue[0], DecisionAction.REJECT, "keyboard-note-1 ax"),
        (queue[1], DecisionAction.SKIP, "second"),
    ]


def test_selecting_a_blueprint_row_opens_it_in_the_editor(
    start_studio: Callable[[], Studio], browser: Browser
) -> None:
    server = start_studio()
    page = open_page(browser, f"{server.url}/blueprints")
    page.wait_for_selector("text=blueprints match")
    grid = page.locator('[data-testid="stDataFrame"]').first
    box = grid.bounding_box()
    assert box is not None
    # The row-selection checkboxes sit in the first column; row 3 is 35 px rows below the header.
    page.mouse.click(box["x"] + 18, box["y"] + 35 + 2 * 35 + 17)
    settle(page)
    page.get_by_role("button", name="Edit selected").click()
    page.wait_for_selector("text=Editing")
    heading = page.locator("h3", has_text="Editing").inner_text()
    page.get_by_role("button", name="Run it").click()
    page.wait_for_selector("text=findings in")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    _screenshot(page, "blueprints")
    server.stop()

    with Store(server.db) as store:
        third = store.blueprints.list(limit=3).items[2]
    assert third.id in heading


def test_first_start_gives_the_whole_loop_and_every_page_is_screenshotted(
    start_studio: Callable[[], Studio], browser: Browser
) -> None:
    server = start_studio()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = open_page(browser, f"{server.url}/propose?reviewer=ann")
    page.get_by_role("button", name="Propose", exact=True).click()
    page.wait_for_selector("text=Last run:", timeout=120_000)
    settle(page)
    _screenshot(page, "propose")

    page.goto(f"{server.url}/review?reviewer=ann")
    _wait_for_card(page, "Item 1 of")
    page.locator("h1").first.click()
    pressed = []
    for position, key in enumerate("axaaxs", start=2):  # 3 accepts, 2 rejects, 1 skip
        # A call whose run failed cannot be accepted (its Accept is disabled): reject it instead.
        key = key if key != "a" or accept_enabled(page) else "x"
        pressed.append(key)
        page.keyboard.press(key)
        _wait_for_card(page, f"Item {position} of")
    _screenshot(page, "review")

    for name, path, marker in (
        ("overview", "", "Acceptance"),  # the default page lives at the root
        ("corpus", "corpus", "Search this corpus"),
        ("export", "export", "Preview"),
    ):
        page.goto(f"{server.url}/{path}?reviewer=ann")
        page.wait_for_selector(f"text={marker}")
        settle(page)
        if name == "corpus":
            # The sidebar's corpus picker (it starts on the first corpus by name).
            page.locator('[data-testid="stSidebar"]').get_by_role("combobox").click()
            page.get_by_role("option", name="ledger", exact=True).click()
            page.wait_for_selector("text=ledger ·")
            settle(page)
            # A search with hits in code and in comments, and the file that has most of them.
            pattern = page.get_by_role("textbox", name="Pattern *")
            pattern.fill("System.out.println")
            pattern.press("Enter")
            settle(page)
            page.get_by_role("button", name="Run", exact=True).click()
            page.wait_for_selector("text=5 findings")
            page.get_by_text("TransferService.java · 2 hits").click()
            page.wait_for_selector("text=Whole file, hits marked")
        assert "Traceback" not in _main_text(page)
        _screenshot(page, name)
    server.stop()

    with Store(server.db) as store:
        counts = store.counts()
    assert counts.blueprints >= 30  # the shipped seeds, loaded on first start
    assert counts.proposals > 0 and counts.executed == counts.proposals
    assert (counts.accepted, counts.rejected, counts.skipped) == (
        pressed.count("a"),
        pressed.count("x"),
        pressed.count("s"),
    )
    assert counts.accepted >= 1
