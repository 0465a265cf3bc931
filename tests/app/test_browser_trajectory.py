"""The trajectory view in a real browser (Debian's Chromium, driven by Playwright): an agent run's
episode opened by its address, paged, Back to the page before, the two runs side by side on the
blueprint, and the Evaluations chart at 1440 and 900 px; saved as docs/screenshots/trajectory.png.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
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

from codesearch_core.corpora import corpus_root, load_seed_blueprints
from codesearch_core.gym import DEFAULT_SETTINGS, Episode, ReferencePolicy, Task, evaluate_agent
from codesearch_core.ingest import ensure_seeded
from codesearch_core.store import Store

pytestmark = BROWSER_MARKS
TURNS = 12


class Wanderer:
    """An agent that searches and reads for eleven turns before it submits one expected span."""

    name = "wanderer"
    model = "wanderer"

    def play(self, episode: Episode) -> None:
        bp = episode.blueprint
        first = bp.expected[0]
        read = {"name": "read_file", "arguments": {"path": first.path,
                "start_line": first.start_line, "end_line": first.end_line + 2}}  # fmt: skip
        for _ in range(TURNS - 1):
            episode.step([bp.reference_call.to_dict(), read])
        episode.step([{"name": "submit", "arguments": {"locations": [first.to_dict()]}}])


def test_an_episode_opens_by_its_address_pages_goes_back_and_sits_beside_the_other_run(
    start_studio: Callable[[], Studio], browser: Browser, tmp_path: Path
) -> None:
    bp = next(b for b in load_seed_blueprints() if b.plan is None and len(b.expected) >= 2)
    task = Task(bp, corpus_root(bp.corpus))
    with Store(tmp_path / "studio.duckdb") as store:
        ensure_seeded(store)
        store.evals.save(evaluate_agent(ReferencePolicy(), [task], label="one seed"))
        long_run = evaluate_agent(Wanderer(), [task], label="one seed",
                                  settings=replace(DEFAULT_SETTINGS, max_turns=TURNS))  # fmt: skip
        store.evals.save(long_run)
    server = start_studio()
    address = f"{server.url}/evaluations?reviewer=ann&run={long_run.run_id}&blueprint={bp.id}"
    page = open_page(browser, address)
    content = page.locator('[data-testid="stMain"]')
    # The episode the address names, its first page of turns: 1 to 10 of 12.
    expect(content).to_contain_text("Turn 10", timeout=UI_TIMEOUT_MS)
    expect(content).not_to_contain_text("Turn 11")
    expect(content).to_contain_text("Side by side on this blueprint")
    # Side by side: the reference found every expected span in one turn, the wanderer one span
    # in twelve turns.
    tables = page.locator('[data-testid="stTable"]')  # the overall table first, then these two
    runs_table = tables.nth(1).inner_text()
    assert "wanderer" in runs_table and "reference" in runs_table
    assert f"1 of {len(bp.expected)} expected" in runs_table
    assert "miss" in tables.nth(2).inner_text() and "hit" in tables.nth(2).inner_text()
    # The first search's findings opened, marked in the corpus files: the screenshot for docs,
    # from the side-by-side view down.
    page.locator('[data-testid="stExpander"] summary').first.click()
    settle(page)
    expect(
        content.locator('[data-testid="stExpander"] [data-testid="stHtml"]').first
    ).to_be_visible()
    page.set_viewport_size({"width": 1440, "height": 3200})
    settle(page)
    # The page scrolls inside the app's main block: at its top, the side-by-side view is where
    # the viewport shows it.
    page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollTo(0, 0)")
    settle(page)
    top = page.get_by_text("Side by side on this blueprint").bounding_box()
    assert top is not None
    y = max(0.0, top["y"] - 20)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "trajectory.png"),
                    clip={"x": 300, "y": y, "width": 1100, "height": min(1900.0, 3200 - y)})  # fmt: skip
    # The next page of turns: 11 and 12, the submit diffed, the reward; the page is in the address.
    page.get_by_text("11 to 12", exact=True).click()
    settle(page)
    expect(content).to_contain_text("Turn 12", timeout=UI_TIMEOUT_MS)
    expect(content).to_contain_text("Submitted locations")
    expect(content).to_contain_text("R_find")
    assert "turns=2" in page.url
    # Back returns to the first page of turns.
    page.go_back()
    settle(page)
    expect(content).to_contain_text("Turn 1", timeout=UI_TIMEOUT_MS)
    expect(content).not_to_contain_text("Turn 12")
    assert "turns=1" in page.url
    # The chart: checked by eye at 1440 and 900 px (whole labels, a few ticks).
    for width in (1440, 900):
        page.set_viewport_size({"width": width, "height": 1000})
        page.locator('[data-testid="stVegaLiteChart"]').first.scroll_into_view_if_needed()
        settle(page)
        page.locator('[data-testid="stVegaLiteChart"]').first.screenshot(
            path=str(tmp_path / f"chart-{width}.png")
        )
    assert "Traceback" not in content.inner_text()
