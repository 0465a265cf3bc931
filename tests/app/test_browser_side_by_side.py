"""Two episodes of one task side by side in a real browser (issue 39, item 3): on the Episodes card
a reviewer sets the episode beside another of its task, reloads (the pair is in the address) and
accepts with A (the next card opens alone); on the Evaluations page two agent runs' best episodes
are shown turn against turn, and Back returns to the one answer."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from browser_support import BROWSER_MARKS, Studio, open_page, settle
from gym_support import slow_agent, webshop_task
from playwright.sync_api import Browser, Page

from codesearch_core import ingest
from codesearch_core.cli import main
from codesearch_core.corpora import blueprint_to_dict
from codesearch_core.gym import ReferencePolicy, as_tasks, rollouts, seed_blueprints
from codesearch_core.store import Store, StoredEpisode

pytestmark = BROWSER_MARKS

ENDED = "No turn: this episode had ended."


def _columns_text(page: Page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def test_an_episode_beside_another_of_its_task_survives_a_reload_and_the_next_card_opens_alone(
    start_studio: Callable[[], Studio], browser: Browser, tmp_path: Path
) -> None:
    bp = webshop_task()
    other_task = next(b for b in seed_blueprints() if b.corpus == "webshop" and b.id != bp.id)
    slow = slow_agent(bp)
    with Store(tmp_path / "studio.duckdb") as store:
        ingest.ensure_seeded(store)
        for task in (bp, other_task):  # one at a time: the queue's order is the order stored
            rollouts(ReferencePolicy(), as_tasks([task]).tasks, store, k=1)
        info = slow["info"]
        store.episodes.save([StoredEpisode(
            bp.id, bp.corpus, "openai", "small-model", info["reward"], info["components"],
            info["components"]["R_find"], len(slow["turns"]), info["calls"], 0, "submitted", slow,
        )])  # fmt: skip
        first, second, third = store.episodes.list()
    assert [e.blueprint_id for e in (first, second, third)] == [bp.id, other_task.id, bp.id]
    server = start_studio()
    page = open_page(browser, f"{server.url}/review?reviewer=ann&queue=episodes")
    page.get_by_role("heading", name="Episode 1 of 3 · 3 left").wait_for()
    page.get_by_text(f"Episode {first.episode_id[:10]} · reference").wait_for()
    assert ENDED not in _columns_text(page)

    page.get_by_text("Compare with another episode of this task").click()
    page.get_by_text(ENDED).wait_for()  # the reference's two turns beside the slower agent's three
    settle(page)
    text = _columns_text(page)
    assert "small-model" in text and "Turn 3" in text
    assert f"vs={third.episode_id}" in page.url

    page.reload()
    settle(page)
    page.get_by_text(ENDED).wait_for()  # the address reopens the pair
    assert f"item={first.episode_id}" in page.url

    settle(page)
    page.locator("body").press("a")
    page.get_by_text(f"Accepted episode {first.episode_id[:10]}.").wait_for()
    page.get_by_role("heading", name="Episode 2 of 3 · 2 left").wait_for()
    settle(page)
    assert ENDED not in _columns_text(page) and "vs=" not in page.url


def test_two_agent_runs_best_episodes_turn_against_turn_and_back_to_one_answer(
    start_studio: Callable[[], Studio], browser: Browser, tmp_path: Path
) -> None:
    bp = webshop_task()
    db = tmp_path / "studio.duckdb"
    with Store(db) as store:
        ingest.ensure_seeded(store)
    tasks, recorded = tmp_path / "task.jsonl", tmp_path / "slow.jsonl"
    tasks.write_text(json.dumps(blueprint_to_dict(bp)) + "\n", encoding="utf-8")
    recorded.write_text(json.dumps(slow_agent(bp)) + "\n", encoding="utf-8")
    assert main(["eval", "--agent", "--engine", "import", "--from", str(recorded),
                 "--blueprints", str(tasks), "--db", str(db)]) == 0  # fmt: skip
    assert main(["eval", "--agent", "--engine", "reference", "--blueprints", str(tasks),
                 "--db", str(db)]) == 0  # fmt: skip
    server = start_studio()
    page = open_page(browser, f"{server.url}/evaluations?reviewer=ann")
    page.get_by_text("Side by side on this blueprint").wait_for()
    settle(page)
    assert ENDED not in _columns_text(page)
    page.get_by_text("Both runs' best episodes side by side").click()
    page.get_by_text(ENDED).wait_for()
    settle(page)
    assert "view=pair" in page.url and "Turn 3" in _columns_text(page)
    page.go_back()
    settle(page)
    page.get_by_text("One answer").wait_for()
    assert ENDED not in _columns_text(page) and "view=pair" not in page.url
