"""The studio as reviewers live in it (issue 29), walked in a real browser: one store for the
whole file on the session's shared server (seeding it is the slowest step under load), each test
on its own page and its own reviewer name so the tests do not lean on each other's state.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from browser_support import (
    CHROMIUM,
    UI_TIMEOUT_MS,
    SharedStudio,
    Studio,
    clipped,
    open_page,
    settle,
)
from playwright.sync_api import Browser, Page, expect

from codesearch_core import ingest, studio
from codesearch_core.engines.mutations import MutationEngine
from codesearch_core.store import Store
from codesearch_core.store.types import BlueprintFilters
from codesearch_core.synthesis import TemplateWriter, synthesize
from codesearch_core.verify.pending import verify_pending

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="needs Debian's Chromium at /usr/bin/chromium (apt-get install chromium); "
        "no browser is downloaded",
    ),
]


#: The store the server starts with: the shipped seeds, two mutation proposals on each of the first
#: blueprints (executed and graded; one of them fails), and three synthesized drafts.
SEEDED: dict[str, list[str]] = {}
#: The review card's heading: "Item 3 of 12 · 9 undecided".
ITEM = re.compile(r"^Item \d+ of \d+")
#: The reviewer's progress bar in a queue: "Your progress: 3 of 12 done".
PROGRESS = re.compile(r"Your progress: (\d+) of (\d+) done")


def _seed(db: Path) -> None:
    with Store(db) as store:
        ingest.ensure_seeded(store)
        blueprints = studio.all_blueprints(store, BlueprintFilters(), limit=1000)[:6]
        studio.propose_into_store(store, MutationEngine(), blueprints, n=2)
        verify_pending(store, workers=1)
        report = synthesize("webshop", writer=TemplateWriter(), sink=store.drafts, limit=3)
        items = [store.review_item(i.proposal_id) for i in store.review_queue(limit=50).items]
        SEEDED["drafts"] = list(report.draft_ids)
        SEEDED["failed"] = [
            i.proposal.id for i in items if i and i.execution and not i.execution.ok
        ]


@pytest.fixture(scope="module")
def server(shared_studio: SharedStudio, tmp_path_factory: pytest.TempPathFactory) -> Studio:
    """The session's server on this file's store (no test of another file runs in between)."""
    db = tmp_path_factory.mktemp("studio") / "studio.duckdb"
    _seed(db)
    return shared_studio.serve(db)


def _type_pattern_and_click(page: Page, pattern: str, run_button: str) -> None:
    """Type into the Pattern field key by key, as a person does, then click Run straight away:
    no Enter, no click elsewhere first."""
    field = page.get_by_role("textbox", name="Pattern *")
    field.click()
    field.press_sequentially(pattern, delay=20)
    page.get_by_role("button", name=run_button).click()


def test_typing_a_pattern_and_clicking_run_runs_it_on_the_corpus_page(
    server: Studio, browser: Browser
) -> None:
    # A shipped Python corpus named in the address: the first corpus by name depends on which real
    # corpora are fetched (bats, a shell package, has no "def ").
    page = open_page(browser, f"{server.url}/corpus?reviewer=ann&corpus=datapipe")
    _type_pattern_and_click(page, "def ", "Run")
    expect(page.get_by_text("findings in").first).to_be_visible(timeout=UI_TIMEOUT_MS)


def test_typing_a_pattern_and_clicking_run_it_runs_it_in_the_blueprints_editor(
    server: Studio, browser: Browser
) -> None:
    page = open_page(browser, f"{server.url}/blueprints?reviewer=ann")
    page.get_by_role("button", name="New blueprint").click()
    settle(page)
    _type_pattern_and_click(page, "def ", "Run it")
    expect(page.get_by_text("findings in").first).to_be_visible(timeout=UI_TIMEOUT_MS)


def test_the_drafts_queue_takes_a_and_x_says_what_it_did_and_is_in_the_address(
    server: Studio, browser: Browser
) -> None:
    page = open_page(browser, f"{server.url}/review?reviewer=dee")
    page.locator('[data-testid="stButtonGroup"]').get_by_text("Drafts (3)").click()
    settle(page)
    assert "queue=drafts" in page.url  # a reload or a link keeps the queue
    page.get_by_text("Draft 1 of 3 · 3 pending").wait_for()
    page.get_by_text("Keys: A accept · X reject").wait_for()
    settle(page)  # a key pressed while a run still draws the card can be lost
    page.locator("body").press("a")  # the key, not a click: as a reviewer does
    page.get_by_text("Accepted: blueprint").wait_for()
    page.get_by_text("Draft 2 of 3 · 2 pending").wait_for()
    settle(page)  # a key pressed while a run still draws the card can be lost
    page.locator("body").press("x")
    page.get_by_text(f"Rejected draft {SEEDED['drafts'][1]}.").wait_for()
    page.get_by_text("Draft 3 of 3 · 1 pending").wait_for()
    page.reload()
    settle(page)
    page.get_by_text("Draft 3 of 3 · 1 pending").wait_for()  # the address brought it back


def test_previous_and_next_step_through_what_a_reviewer_decided_and_the_bar_counts_it(
    server: Studio, browser: Browser
) -> None:
    page = open_page(browser, f"{server.url}/review?reviewer=ivy")
    page.get_by_text(ITEM).first.wait_for()
    first = _heading(page)
    bar = page.get_by_text(PROGRESS)
    done, share = (int(n) for n in PROGRESS.search(bar.inner_text()).groups())  # type: ignore[union-attr]
    settle(page)  # a key pressed while a run still draws the card can be lost
    page.locator("body").press("x")
    expect(page.locator("h4").first).not_to_have_text(first)
    second = _heading(page)
    settle(page)  # a key pressed while a run still draws the card can be lost
    page.locator("body").press("s")
    expect(page.locator("h4").first).not_to_have_text(second)
    third = _heading(page)
    page.get_by_text(f"Your progress: {done + 2} of {share} done").wait_for()

    settle(page)  # a key pressed while a run still draws the card can be lost
    page.locator("body").press("ArrowLeft")  # the skipped item, as it was left
    page.get_by_text("Stepping back: decided item 2 of 2").wait_for()
    assert _position(_heading(page)) == _position(second)
    page.get_by_text("Reviews: ivy skip").wait_for()
    page.get_by_role("button", name="Previous").click()  # the mouse does the same
    page.get_by_text("Stepping back: decided item 1 of 2").wait_for()
    assert _position(_heading(page)) == _position(first)
    page.get_by_text("Reviews: ivy reject").wait_for()
    settle(page)  # a key pressed while a run still draws the card can be lost
    page.locator("body").press("ArrowRight")
    page.get_by_text("Stepping back: decided item 2 of 2").wait_for()
    settle(page)  # a key pressed while a run still draws the card can be lost
    page.locator("body").press("ArrowRight")  # past the last: back to the items to do
    expect(page.get_by_text("Stepping back:")).to_have_count(0)
    assert _position(_heading(page)) == _position(third)
    # Stepping decided nothing: the bar did not move.
    page.get_by_text(f"Your progress: {done + 2} of {share} done").wait_for()


def test_a_failed_run_says_in_view_why_it_cannot_be_accepted(
    server: Studio, browser: Browser
) -> None:
    failed = SEEDED["failed"][0]
    page = open_page(browser, f"{server.url}/review?reviewer=eve&item={failed}")
    accept = page.get_by_role("button", name="Accept")
    accept.wait_for()
    settle(page)
    expect(accept).to_be_disabled()
    settle(page)  # a key pressed while a run still draws the card can be lost
    page.locator("body").press("a")
    why = page.get_by_text("Its run failed: only a call that ran without an error can be accepted")
    expect(why).to_be_visible()
    # In view next to the greyed button, not in a tooltip nor a screen away.
    button_box, why_box = accept.bounding_box(), why.bounding_box()
    assert button_box is not None and why_box is not None
    assert abs(why_box["y"] - button_box["y"]) < 120


def _heading(page: Page) -> str:
    """The card's heading, once its buttons take keys (a key pressed sooner is lost)."""
    expect(page.get_by_role("button", name="Reject")).to_be_enabled()
    settle(page)
    return str(page.locator("h4").first.inner_text())


def _position(heading: str) -> str:
    """ "Item 3 of 12" of the card's heading "Item 3 of 12 · 9 undecided"."""
    return heading.split(" · ")[0]


def test_back_and_forward_walk_between_pages_and_review_items_without_deciding_again(
    server: Studio, browser: Browser
) -> None:
    # Positions are read, not assumed: other walks in this file lease items too.
    page = open_page(browser, f"{server.url}/?reviewer=fay")
    page.get_by_role("link", name="Review").click()
    page.get_by_text(ITEM).first.wait_for()
    first = _heading(page)
    first_url = page.url
    settle(page)  # a key pressed while a run still draws the card can be lost
    page.locator("body").press("x")  # reject the first item: the card moves on
    expect(page.locator("h4").first).not_to_have_text(first)
    second = _heading(page)
    assert "item=" in page.url and page.url != first_url

    # Back: the item before, as it was left (decided once, not again): the count did not move.
    back_heading = second.replace(_position(second), _position(first))
    page.go_back()
    expect(page.locator("h4").first).to_have_text(back_heading)
    page.get_by_text("Reviews: fay reject").wait_for()
    page.go_forward()
    expect(page.locator("h4").first).to_have_text(second)

    page.go_back()
    expect(page.locator("h4").first).to_have_text(back_heading)
    settle(page)  # a person sees the item before pressing Back again: a Back pressed while a
    page.wait_for_timeout(1000)  # run is still on its way lands on that run's page (Streamlit)
    page.go_back()  # and the page before the Review page
    page.get_by_role("heading", name="Overview").wait_for()
    settle(page)
    page.go_forward()
    expect(page.locator("h4").first).to_have_text(back_heading)


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the walks leave screenshots for a person to look at (under pytest's temp folder, not
    docs/: they are not compared, and a test run should not change the tree)."""
    return tmp_path_factory.mktemp("issue29-shots")


def test_a_new_blueprint_form_is_quiet_and_its_difficulty_fits_at_1440(
    server: Studio, browser: Browser, shots: Path
) -> None:
    page = open_page(browser, f"{server.url}/blueprints?reviewer=gus")
    page.get_by_role("button", name="New blueprint").click()
    hard = page.locator('[data-testid="stButtonGroup"]').get_by_text("hard", exact=True)
    page.get_by_text("Reference call").scroll_into_view_if_needed()
    settle(page)
    page.screenshot(path=str(shots / "blueprint-new-1440.png"))
    expect(hard).to_be_visible()
    assert not page.get_by_text("The intent must not be empty").is_visible()
    assert clipped(page, '[data-testid="stButtonGroup"]') == []
    # Emptied by the author, the intent does say so.
    intent = page.get_by_label("Intent")
    intent.fill("Find the handlers")
    intent.press("Tab")
    settle(page)
    intent.fill("")
    intent.press("Tab")
    expect(page.get_by_text("The intent must not be empty")).to_be_visible()


def test_export_counts_before_writing_says_where_and_keeps_write_in_reach(
    server: Studio, browser: Browser, shots: Path
) -> None:
    page = open_page(browser, f"{server.url}/export?reviewer=hal")
    page.get_by_role(
        "combobox", name="Format"
    ).click()  # a preference format: pairs are only known when built
    page.get_by_role("option", name="hf-preference", exact=False).first.click()
    settle(page)
    page.get_by_text("Record 1").wait_for()
    # The line is drawn for the format picked before until the new format's run ends: wait for it.
    expect(page.get_by_text("Will be written to")).to_contain_text("hf-preference.jsonl")
    # Write sits below a collapsed preview: within a couple of screens, not 9,000 px down. (Under
    # load the button is drawn a moment after the destination line: wait for it.)
    page.locator("button", has_text="Write").first.wait_for()
    top = page.evaluate(
        """() => [...document.querySelectorAll('button')].find(b => b.innerText.includes('Write'))
                 .getBoundingClientRect().top + document.querySelector('[data-testid="stMain"]').scrollTop"""
    )
    assert top < 2500, top
    page.get_by_role("button", name="Count the pairs").click()
    page.locator('[data-testid="stMetric"]', has_text="Pairs").wait_for()
    value = page.locator('[data-testid="stMetric"]', has_text="Pairs").inner_text()
    assert any(ch.isdigit() for ch in value.split("Pairs", 1)[1]), value
    page.screenshot(path=str(shots / "export-1440.png"), full_page=True)


def test_the_corpus_page_says_sizes_and_refusals_in_a_page_users_words(
    server: Studio, browser: Browser
) -> None:
    page = open_page(browser, f"{server.url}/corpus?reviewer=ivy")
    page.get_by_text("Add a corpus").click()
    page.get_by_text("(CODESEARCH_CORPUS_MAX_BYTES)").wait_for()
    limit = page.get_by_text("(CODESEARCH_CORPUS_MAX_BYTES)").inner_text()
    assert "GiB" in limit and "bytes (" not in limit, limit  # not 2,147,483,648 bytes
    page.get_by_role("textbox", name="Name", exact=True).fill("click")
    page.get_by_role("textbox", name="Source", exact=True).fill("pypi:click==8.1.7")
    page.get_by_role("button", name="Add").click()
    refusal = page.get_by_text("exists already")
    expect(refusal).to_be_visible()
    assert "--replace" not in refusal.inner_text()
    assert "Replace a corpus of that name" in refusal.inner_text()
    # The ripgrep form spells PCRE2 as its project does.
    expect(page.get_by_text("PCRE2", exact=True)).to_be_visible()


def test_at_900_px_the_sidebar_folds_and_the_card_action_row_fits(
    server: Studio, browser: Browser, shots: Path
) -> None:
    page = browser.new_page(viewport={"width": 900, "height": 1000})
    page.set_default_timeout(UI_TIMEOUT_MS)
    page.goto(f"{server.url}/review?reviewer=jon")
    page.get_by_text(ITEM).first.wait_for()
    expect(page.get_by_role("button", name="Reject")).to_be_enabled()
    settle(page)
    page.screenshot(path=str(shots / "review-900.png"))
    sidebar = page.locator('[data-testid="stSidebar"]')
    box = sidebar.bounding_box()
    assert box is None or box["x"] + box["width"] <= 1, box  # folded away, not a third
    row = '[data-testid="stHorizontalBlock"]:has(button[kind="primary"])'
    assert clipped(page, row) == []


def test_at_900_px_the_name_is_asked_in_the_page_and_the_note_hint_covers_nothing(
    server: Studio, browser: Browser, shots: Path
) -> None:
    page = browser.new_page(viewport={"width": 900, "height": 900})
    page.set_default_timeout(UI_TIMEOUT_MS)
    page.goto(f"{server.url}/review")
    # The sidebar is folded: the name is asked for here, in view, not "in the sidebar" (issue 39).
    name = page.get_by_role("textbox", name="Your name")
    expect(name).to_be_visible()
    settle(page)
    box, side = name.bounding_box(), page.locator('[data-testid="stSidebar"]').bounding_box()
    assert box is not None and box["y"] + box["height"] <= 900, box
    assert side is None or side["x"] + side["width"] <= 1, side
    expect(page.get_by_text("in the sidebar")).to_have_count(0)
    page.screenshot(path=str(shots / "name-asked-900.png"))
    # Typed, then a click elsewhere (no Enter): the name is the reviewer's, everywhere.
    name.fill("nia")
    page.get_by_role("heading", name="Review").click()
    # Settled first: while the run draws the named card, the nameless one's greyed Reject is
    # still in the page beside the new one until the run ends.
    settle(page)
    expect(page.get_by_role("button", name="Reject")).to_be_enabled()
    expect(name).to_have_count(0)
    expect(page.get_by_role("textbox", name="Reviewer")).to_have_value("nia")  # the sidebar's
    assert "reviewer=nia" in page.url
    settle(page)

    # A long note typed in the card's narrow note field: Streamlit's "Press Enter to apply"
    # used to sit over its last words; the key line under the row says it instead.
    note = page.get_by_role("textbox", name="Note")
    note.click()
    note.press_sequentially("the pattern also hits the comments in the hooks folder", delay=5)
    hint = page.locator('.st-key-queue_actions [data-testid="InputInstructions"]')
    expect(hint).to_have_count(1)  # drawn by Streamlit while the note is typed in ...
    expect(hint).to_be_hidden()  # ... and not over the text
    page.get_by_text("Enter or Esc leaves the note").wait_for()
    page.screenshot(path=str(shots / "note-typed-900.png"))
    note.press("Escape")


def test_a_search_opens_its_first_hit_and_the_corpus_is_in_the_address(
    server: Studio, browser: Browser
) -> None:
    page = open_page(browser, f"{server.url}/corpus?reviewer=kim&corpus=ledger")
    corpus = page.get_by_role("combobox", name="Corpus")
    expect(corpus).to_have_value("ledger", timeout=UI_TIMEOUT_MS)
    assert "corpus=ledger" in page.url
    _type_pattern_and_click(page, "datasource", "Run")
    page.get_by_text("findings in").first.wait_for()
    settle(page)
    # The viewer shows a file with hits (its Hits / whole-file switch is only drawn for one),
    # not the file that was open before the search.
    expect(page.get_by_text("Whole file, hits marked")).to_be_visible()
    # Another corpus picked in the sidebar goes into the address too.
    page.get_by_role("combobox", name="Corpus").click()
    page.get_by_role("option", name="webshop").click()
    settle(page)
    assert "corpus=webshop" in page.url


def test_a_corpus_just_added_is_the_one_open(
    start_studio: Callable[..., Studio], browser: Browser, tmp_path: Path
) -> None:
    # Its own server and corpora folder: adding a corpus must not touch the clone's data/.
    corpora_dir = tmp_path / "corpora"
    for name in ("alpha", "mine-src"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "main.py").write_text(f"def {name.replace('-', '_')}():\n    pass\n")
    first = start_studio(env={"CODESEARCH_CORPORA": str(corpora_dir)})
    page = open_page(browser, f"{first.url}/corpus?reviewer=lee")
    for name, src in (("alpha", "alpha"), ("mine", "mine-src")):
        page.get_by_role("textbox", name="Name", exact=True).fill(name)
        page.get_by_role("textbox", name="Source", exact=True).fill(str(tmp_path / src))
        page.get_by_role("button", name="Add").click()
        page.get_by_text(f"Added {name}").wait_for()
        settle(page)
        expect(page.get_by_role("combobox", name="Corpus")).to_have_value(name)
        assert f"corpus={name}" in page.url
        if not page.get_by_role("textbox", name="Name", exact=True).is_visible():
            page.get_by_text("Add a corpus").click()
