"""The Evaluations page in a real browser (Debian's Chromium, driven by Playwright): two eval runs
made by `codesearch eval` side by side, the Altair chart drawn, the item-by-item comparison, and
an answer opened in the review card's diff view; saved as docs/screenshots/evaluations.png."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from browser_support import (
    BROWSER_MARKS,
    SCREENSHOTS,
    UI_TIMEOUT_MS,
    Studio,
    open_page,
    settle,
)
from playwright.sync_api import Browser, expect

from codesearch_core.cli import main
from codesearch_core.ingest import ensure_seeded
from codesearch_core.store import Store

pytestmark = BROWSER_MARKS


def test_two_runs_compared_and_an_answer_in_the_diff_view(
    start_studio: Callable[[], Studio], browser: Browser, tmp_path: Path
) -> None:
    db = tmp_path / "studio.duckdb"
    with Store(db) as store:
        ensure_seeded(store)
    for n in ("1", "3"):
        assert main(["eval", "--engine", "mutations", "--blueprints", "seeds", "--tag", "lang:go",
                     "--n", n, "--db", str(db)]) == 0  # fmt: skip
    server = start_studio()
    page = open_page(browser, f"{server.url}/evaluations?reviewer=ann")
    page.wait_for_selector("text=By category")
    # The chart is drawn (Vega renders into a canvas or an svg), both runs in its legend.
    page.locator('[data-testid="stVegaLiteChart"]').first.wait_for()
    page.locator('[data-testid="stVegaLiteChart"] canvas, [data-testid="stVegaLiteChart"] svg'
                 ).first.wait_for()  # fmt: skip
    # The sections below the chart are drawn after it: wait for each rather than read a page half
    # drawn (a loaded machine takes seconds between them).
    content = page.locator('[data-testid="stMain"]')
    for words in ("Better", "Worse", "Same", "Proposed call", "Reference call"):
        expect(content).to_contain_text(words, timeout=UI_TIMEOUT_MS)
    settle(page)
    main_text = content.inner_text()
    assert "Traceback" not in main_text
    # The first answer is open: the changed fields and the findings marked in the files, or why
    # the call did not run.
    assert "Findings" in main_text or "Invalid" in main_text or "run failed" in main_text
    height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": 1440, "height": max(900, min(int(height) + 40, 3200))})
    settle(page)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "evaluations.png"))
