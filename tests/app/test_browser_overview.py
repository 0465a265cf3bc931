"""The Overview per queue in a real browser (issue 39, item 4): Episodes picked on the selector
shows its own figures; QA its measured error rate with its 95% interval; a reload keeps the queue
(it is in the address); the queue's button opens it on the Review page."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from browser_support import BROWSER_MARKS, Studio, open_page, settle
from playwright.sync_api import Browser

from codesearch_core import ingest, studio
from codesearch_core.dataset.items import item_from_blueprint
from codesearch_core.gym import ReferencePolicy, as_tasks, rollouts, seed_blueprints
from codesearch_core.store import EPISODE, QA, BlueprintFilters, QADataset, Store

pytestmark = BROWSER_MARKS

SMALL = QADataset("0123456789abcdef", "small", "/data/small", "cafe" * 16)


def test_a_lead_reads_each_queues_figures_and_opens_the_queue(
    start_studio: Callable[[], Studio], browser: Browser, tmp_path: Path
) -> None:
    with Store(tmp_path / "studio.duckdb") as store:
        ingest.ensure_seeded(store)
        webshop = [b for b in seed_blueprints() if b.corpus == "webshop" and b.plan is None][:3]
        rollouts(ReferencePolicy(), as_tasks(webshop).tasks, store, k=1)
        episodes = [e.episode_id for e in store.episodes.list()]
        store.queue(EPISODE).decide(episodes[0], "accept", "ann")
        store.queue(EPISODE).decide(episodes[1], "reject", "ann")
        ledger = studio.all_blueprints(store, BlueprintFilters(corpus="ledger"), limit=1000)
        items = [{**item_from_blueprint(b), "split": "eval"} for b in ledger if b.plan is None]
        store.qa.import_sample(SMALL, [("ledger", i) for i in items[:3]])
        store.queue(QA).decide(f"{SMALL.dataset_id}.{items[0]['id']}", "accept", "ann")
        store.queue(QA).decide(f"{SMALL.dataset_id}.{items[1]['id']}", "reject", "ann")
        overall, _ = studio.error_rates(store.queue(QA).stats())
    assert len(episodes) == 3 and overall.judged == 2
    server = start_studio()
    page = open_page(browser, f"{server.url}/?reviewer=lee")
    main = page.locator('[data-testid="stMain"]')
    selector = page.locator('[data-testid="stButtonGroup"]')

    selector.get_by_text("Episodes", exact=True).click()
    settle(page)
    page.get_by_text("Settled: 2 of 3 episodes").wait_for()
    assert "queue=episodes" in page.url
    shown = main.inner_text()
    for label, value in (("Episodes", 3), ("Open", 1), ("Accepted", 1), ("Rejected", 1)):
        assert re.search(rf"{label}\s+{value}\b", shown), (label, shown[:1500])
    assert "Over blind votes" in shown and "Blueprints" not in shown

    selector.get_by_text("QA", exact=True).click()
    settle(page)
    page.get_by_text("Measured error rate").wait_for()
    assert "95% CI" in overall.interval and overall.interval in main.inner_text()

    page.reload()  # the queue is in the address: a reload shows QA again
    settle(page)
    page.get_by_text("Measured error rate").wait_for()
    assert "queue=qa" in page.url

    page.get_by_role("button", name="Review QA").click()
    settle(page)
    page.get_by_role("heading", name="QA item 1 of 1 · 1 left").wait_for()
    assert "/review" in page.url and "queue=qa" in page.url
