"""The typed filter of the Episodes and QA queues and a lead's bulk actions over it, in a real
browser (issue 39, item 4): the filter steers the card (typed, then a click elsewhere, no Enter;
a reload keeps it), the verified reference episodes are accepted in one batch (`min_reward=1`)
while a weaker episode stays open, then the batch is undone; one QA item, found by its data set
id, is the card's and is marked incorrect with a reason in one batch. A wrong filter key says
which keys there are."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from browser_support import BROWSER_MARKS, Studio, open_page, settle
from dataset_support import LEDGER_ALONE, small_variant
from gym_support import slow_agent, webshop_task
from playwright.sync_api import Browser, Page, expect

from codesearch_core import ingest
from codesearch_core.cli import main
from codesearch_core.dataset import build_dataset, dataset_of, load_recipe
from codesearch_core.gym import ReferencePolicy, as_tasks, rollouts, seed_blueprints
from codesearch_core.store import EPISODE, QA, Store, StoredEpisode

pytestmark = BROWSER_MARKS


def _filter(page: Page, words: str) -> None:
    """Type the queue's filter and click elsewhere, as a reviewer does (no Enter)."""
    box = page.get_by_role("textbox", name="Filter")
    box.fill(words)
    page.get_by_role("heading", name="Review").click()  # the box commits when it loses focus
    settle(page)


def _bulk(page: Page) -> None:
    page.get_by_text("Bulk actions (lead)").click()
    settle(page)


def test_a_lead_accepts_the_verified_episodes_of_a_filter_in_one_batch_and_undoes_it(
    start_studio: Callable[[], Studio], browser: Browser, tmp_path: Path
) -> None:
    bp = webshop_task()
    slow = slow_agent(bp)
    with Store(tmp_path / "studio.duckdb") as store:
        ingest.ensure_seeded(store)
        webshop = [b for b in seed_blueprints() if b.corpus == "webshop" and b.plan is None][:3]
        rollouts(ReferencePolicy(), as_tasks(webshop).tasks, store, k=1)
        info = slow["info"]
        store.episodes.save([StoredEpisode(
            bp.id, bp.corpus, "openai", "small-model", info["reward"], info["components"],
            info["components"]["R_find"], 3, info["calls"], 0, "submitted", slow,
        )])  # fmt: skip
        episodes = store.episodes.list()
    perfect = [e.episode_id for e in episodes if e.reward == 1.0]
    assert len(perfect) == 3 and len(episodes) == 4
    server = start_studio()
    page = open_page(browser, f"{server.url}/review?reviewer=lee&queue=episodes")
    page.get_by_role("heading", name="Episode 1 of 4 · 4 left").wait_for()

    _filter(page, "reward=1")
    page.get_by_text("Not a filter: unknown filter 'reward=1'").wait_for()  # the keys are named
    assert page.get_by_text("Bulk actions (lead)").count() == 0  # nothing in bulk on bad words
    _filter(page, "max_reward=0.99")  # the weaker episode alone is the card's
    page.get_by_role("heading", name="Episode 1 of 1 · 1 left").wait_for()
    assert "small-model" in page.inner_text('[data-testid="stMain"]')
    _filter(page, "min_reward=1")
    page.get_by_role("heading", name="Episode 1 of 3 · 3 left").wait_for()
    page.reload()  # the address keeps the filter, and the card follows it
    settle(page)
    page.get_by_role("heading", name="Episode 1 of 3 · 3 left").wait_for()
    expect(page.get_by_role("textbox", name="Filter")).to_have_value("min_reward=1")
    _bulk(page)
    page.get_by_text("3 will be accepted").wait_for()
    page.get_by_text("Yes, accept these 3").click()
    settle(page)
    page.get_by_role("button", name="Accept 3 items").click()
    page.get_by_text("Accepted 3 items as one batch.").wait_for()
    settle(page)
    with Store(tmp_path / "studio.duckdb") as store:
        states = {e.episode_id: e.decision for e in store.episodes.list()}
        assert store.queue(EPISODE).counts()["accept"] == 3
    assert {i for i, d in states.items() if d == "accept"} == set(perfect)

    page.get_by_role("button", name="Undo batch (3 items)").click()
    page.get_by_text("Batch undone: its items are as they were.").wait_for()
    with Store(tmp_path / "studio.duckdb") as store:
        assert store.queue(EPISODE).counts()["open"] == 4


def test_a_lead_marks_one_qa_item_incorrect_by_its_id_with_a_reason(
    start_studio: Callable[[], Studio], browser: Browser, tmp_path: Path
) -> None:
    recipe = small_variant(tmp_path, *LEDGER_ALONE)
    out, db = tmp_path / "ds", tmp_path / "studio.duckdb"
    build_dataset(load_recipe(recipe), out)
    assert main(["dataset", "sample", str(out), "--n", "4", "--stratify", "language", "--queue",
                 "--db", str(db)]) == 0  # fmt: skip
    with Store(db) as store:
        items = store.qa.items(dataset_of(out).dataset_id)
    assert len(items) == 4
    target = items[-1]
    server = start_studio()
    page = open_page(browser, f"{server.url}/review?reviewer=lee&queue=qa")
    page.get_by_role("heading", name="QA item 1 of 4 · 4 left").wait_for()
    _filter(page, f"text={target.item_id}")  # the data set item's id
    page.get_by_role("heading", name="QA item 1 of 1 · 1 left").wait_for()
    assert target.item_id in page.inner_text('[data-testid="stMain"]')
    _bulk(page)
    page.get_by_text("1 will be rejected").wait_for()
    page.get_by_role("combobox", name="Reason").click()
    page.get_by_role("option").first.click()
    settle(page)
    page.get_by_text("Yes, reject these 1").click()
    settle(page)
    page.get_by_role("button", name="Reject 1 items").click()
    page.get_by_text("Rejected 1 items as one batch.").wait_for()
    with Store(db) as store:
        decided = {i.qa_id: i.decision for i in store.qa.items(dataset_of(out).dataset_id)}
        assert store.queue(QA).counts()["reject"] == 1
    assert decided[target.qa_id] == "reject" and sum(d is not None for d in decided.values()) == 1
