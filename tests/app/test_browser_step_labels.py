"""Step labels on the Episodes card in a real browser (issue 39, item 2): a reviewer labels the
calls of a 4-turn episode with the keys (1 useful, 2 redundant, 3 wrong, K back a step), the labels
land in the store as theirs, and one step is corrected: its turn edited and played again in the
gym, the corrected episode stored beside the original and shown next to it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from browser_support import BROWSER_MARKS, Studio, open_page, settle
from gym_support import slow_agent, webshop_task
from playwright.sync_api import Browser, Page

from codesearch_core import ingest
from codesearch_core.store import Store, StoredEpisode

pytestmark = BROWSER_MARKS


def _flash(page: Page, text: str) -> None:
    page.get_by_text(text).first.wait_for()


def test_a_four_turn_episode_labelled_by_keys_and_one_step_corrected_beside_it(
    start_studio: Callable[[], Studio], browser: Browser, tmp_path: Path
) -> None:
    bp = webshop_task()
    played = slow_agent(bp, searches=2)
    info = played["info"]
    with Store(tmp_path / "studio.duckdb") as store:
        ingest.ensure_seeded(store)
        store.episodes.save([StoredEpisode(
            bp.id, bp.corpus, "openai", "small-model", info["reward"], info["components"],
            info["components"]["R_find"], 4, info["calls"], 0, "submitted", played,
        )])  # fmt: skip
        (episode,) = store.episodes.list()
    assert episode.reward < 1.0
    server = start_studio()
    page = open_page(browser, f"{server.url}/review?reviewer=ann&queue=episodes")
    page.get_by_role("heading", name="Episode 1 of 1 · 1 left").wait_for()
    page.get_by_text("Step 1 of 4").wait_for()
    body = page.locator("body")
    for key, next_step in (("1", 2), ("2", 3), ("3", 4)):
        settle(page)
        body.press(key)
        _flash(page, f"Labelled turn {next_step - 1}, call 1")
        page.get_by_text(f"Step {next_step} of 4").wait_for()
    settle(page)
    body.press("k")  # back to step 3: the repeated search was not wrong, only redundant
    page.get_by_text("Step 3 of 4").wait_for()
    settle(page)
    body.press("2")
    page.get_by_text("Step 4 of 4").wait_for()
    settle(page)
    with Store(tmp_path / "studio.duckdb") as store:
        labels = {(s.turn, s.call): (s.label, s.reviewer) for s in store.steps.labels(
            episode.episode_id)}  # fmt: skip
    assert labels == {(1, 1): ("useful", "ann"), (2, 1): ("redundant", "ann"),
                      (3, 1): ("redundant", "ann")}  # fmt: skip

    # Step 4 is the submit: correct it to every expected span and play it again.
    page.get_by_text("Correct this step").click()
    editor = page.get_by_label("Turn 4's calls (JSON: a list of name and arguments)")
    editor.wait_for()
    fixed = [{"name": "submit", "arguments": {"locations": [s.to_dict() for s in bp.expected]}}]
    editor.fill(json.dumps(fixed))
    editor.press("Control+Enter")  # a text area commits on Ctrl+Enter or when it loses focus
    settle(page)
    page.get_by_role("button", name="Play again from this turn").click()
    _flash(page, "Turn 4 corrected and played again")
    settle(page)
    with Store(tmp_path / "studio.duckdb") as store:
        corrected = [e for e in store.episodes.list() if e.episode_id != episode.episode_id]
    assert len(corrected) == 1 and corrected[0].components["R_find"] == 1.0
    assert corrected[0].reward > episode.reward  # the same four turns, every span found
    # The corrected episode is set beside the original on the card.
    assert f"vs={corrected[0].episode_id}" in page.url
    page.get_by_text(f"reward {corrected[0].reward:.3f}").first.wait_for()
