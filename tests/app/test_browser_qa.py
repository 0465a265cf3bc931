"""The QA queue in a real browser (issue 31's walk): a tiny built data set sampled into the queue
by `codesearch dataset sample DIR --queue`; a reviewer marks two items correct with the A key, one
incorrect with X and a note, undoes that with U and reloads: the queue resumes on the same item,
and `codesearch dataset card DIR` shows the two reviewed with their interval."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from browser_support import BROWSER_MARKS, Studio, clipped, open_page, settle
from dataset_support import LEDGER_ALONE, small_variant
from playwright.sync_api import Browser, Page
from statsmodels.stats.proportion import proportion_confint

from codesearch_core.cli import main
from codesearch_core.dataset import build_dataset, dataset_of, load_recipe
from codesearch_core.store import Store

pytestmark = BROWSER_MARKS


def _heading(page: Page, text: str) -> None:
    page.get_by_role("heading", name=text).wait_for()


def test_two_correct_one_incorrect_undone_reload_resumes_and_the_card_counts_two(
    start_studio: Callable[[], Studio],
    browser: Browser,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    recipe = small_variant(tmp_path, *LEDGER_ALONE)
    out, db = tmp_path / "ds", tmp_path / "studio.duckdb"
    build_dataset(load_recipe(recipe), out)
    assert main(["dataset", "sample", str(out), "--n", "4", "--stratify", "language", "--queue",
                 "--db", str(db)]) == 0  # fmt: skip
    assert "4 new" in capsys.readouterr().out
    with Store(db) as store:
        ids = [i.qa_id for i in store.qa.items(dataset_of(out).dataset_id)]
    assert len(ids) == 4

    server = start_studio()
    page = open_page(browser, f"{server.url}/review?queue=qa")
    # A new reviewer types their name and presses Enter: the next key is the card's, not the name's.
    name = page.get_by_role("textbox", name="Reviewer")
    name.fill("ann")
    name.press("Enter")
    _heading(page, "QA item 1 of 4 · 4 left")
    page.get_by_text("Keys: A correct · X incorrect · S skip · U undo").wait_for()
    assert f"item={ids[0]}" in page.url
    # Four buttons, the note and the reason: at 1280 px the row wraps rather than cut "Incorrect".
    page.set_viewport_size({"width": 1280, "height": 1000})
    settle(page)
    assert clipped(page, '[data-testid="stHorizontalBlock"]:has(button[kind="primary"])') == []

    body = page.locator("body")
    settle(page)  # a key pressed while the first run still draws the card can be lost
    body.press("a")  # the key, not a click: as a reviewer does
    page.get_by_text(f"Correct: item {ids[0]}.").wait_for()
    _heading(page, "QA item 2 of 4 · 3 left")
    assert "reviewer=ann&" in page.url and name.input_value() == "ann"
    settle(page)
    body.press("a")
    page.get_by_text(f"Correct: item {ids[1]}.").wait_for()
    _heading(page, "QA item 3 of 4 · 2 left")
    settle(page)  # the card before's Note field can stand beside this one while a run draws

    note = page.get_by_role("textbox", name="Note")
    note.fill("the expected span misses a line")
    note.press("Enter")  # leaves the note: the next key decides
    settle(page)
    body.press("x")
    page.get_by_text(
        f"Incorrect: item {ids[2]} with the note “the expected span misses a line”."
    ).wait_for()
    _heading(page, "QA item 4 of 4 · 1 left")
    settle(page)
    body.press("u")
    page.get_by_text(f"Undone: item {ids[2]} is back on the card.").wait_for()
    _heading(page, "QA item 3 of 4 · 2 left")
    settle(page)
    assert f"item={ids[2]}" in page.url and "queue=qa" in page.url

    page.reload()
    settle(page)
    _heading(page, "QA item 3 of 4 · 2 left")  # the queue resumes where it was
    server.stop()

    capsys.readouterr()
    assert main(["dataset", "card", str(out), "--db", str(db)]) == 0
    card = capsys.readouterr().out
    low, high = proportion_confint(2, 2, alpha=0.05, method="wilson")
    assert (f"wrong items: **0.0%** (95% interval 0.0% to {100 * (1 - low):.1f}%); correct "
            f"100.0% ({100 * low:.1f}% to {100 * high:.1f}%). From 2 reviewed of a sample of 4 "
            "(2 correct)") in card  # fmt: skip
    assert "2 settled, 2 open, 0 in conflict" in card
    assert (out / "qa/rejected.txt").read_text() == ""
