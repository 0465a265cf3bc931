"""A team in real browsers: two reviewers at once, every page switch with a reviewer set, reloads.

Each reviewer has their own tab (their own Streamlit session) on one `streamlit run app.py`; they
decide in turns, so both sessions write at the same time as far as the server is concerned. The
store is checked after the server is stopped (DuckDB lets one process hold the file).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from browser_support import CHROMIUM, SCREENSHOTS, Studio, accept_enabled, open_page, settle
from playwright.sync_api import Browser, Page

from codesearch_core import ingest, studio
from codesearch_core.engines import MutationEngine
from codesearch_core.export import ExportFormat, export
from codesearch_core.models import Proposal
from codesearch_core.store import BlueprintFilters, ReviewSettings, Store
from codesearch_core.verify import verify_pending

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's Chromium (apt-get install chromium)"
    ),
]

_CARD = re.compile(r"Proposal `?([0-9a-f]{10})`? \(#")  # innerText drops the code backticks
#: Enough for two votes per item, a reload mid-queue and a few conflicts; each item is two key
#: presses with a script run after each, so every item costs seconds.
ITEMS = 20


def _team_store(db: Path) -> None:
    """ITEMS items that ran: the first seeds' reference calls and 6 mutations; 2 reviews per item."""
    with Store(db) as store:
        ingest.ensure_seeded(store)
        blueprints = studio.all_blueprints(store, BlueprintFilters(), limit=1000)
        store.add_proposals(
            [
                Proposal(
                    bp.id,
                    "import",
                    "reference",
                    bp.reference_call.to_json(),
                    bp.reference_call,
                    True,
                )
                for bp in blueprints[: ITEMS - 6]
            ]
        )
        ledger = [bp for bp in blueprints if bp.corpus == "ledger"]
        studio.propose_into_store(store, MutationEngine(), ledger[:6], n=1)
        verify_pending(store, workers=1)
        assert store.counts().proposals == ITEMS
        store.set_review_settings(ReviewSettings(reviews_per_item=2))


def _card(page: Page) -> str | None:
    text = page.inner_text('[data-testid="stMain"]')
    if "Nothing to review with these filters" in text:
        return None
    found = _CARD.search(text)
    return found.group(1) if found else "?"


def _wait_card_change(page: Page, before: str | None) -> str | None:
    page.wait_for_function(
        r"""(before) => {
            const main = document.querySelector('[data-testid="stMain"]');
            if (!main) return false;
            const text = main.innerText;
            if (text.includes('Nothing to review with these filters')) return true;
            const m = text.match(/Proposal `?([0-9a-f]{10})`? \(#/);
            return m && m[1] !== before
                && [...document.querySelectorAll('button')]
                    .some(b => b.innerText.includes('Reject') && !b.disabled);
        }""",
        arg=before,
    )
    settle(page)
    return _card(page)


def test_two_reviewers_at_once_two_reviews_per_item(
    start_studio: Callable[[], Studio], browser: Browser, tmp_path: Path
) -> None:
    _team_store(tmp_path / "studio.duckdb")
    server = start_studio()
    ann = open_page(browser, f"{server.url}/?reviewer=ann")
    # Bug 1: with a reviewer set, every in-app page switch crashed. This one opens Review.
    ann.get_by_role("button", name="Review undecided").click()
    ann.wait_for_url(re.compile(r"/review\?"))
    settle(ann)
    assert "reviewer=ann" in ann.url
    assert not ann.locator('[data-testid="stException"]').count()
    bob = open_page(browser, f"{server.url}/review?reviewer=bob")

    decided: dict[str, list[tuple[str, str]]] = {"ann": [], "bob": []}
    reloaded = False
    # Wait for each first card: a page that has not drawn its card yet has no item to decide.
    cards = {"ann": _wait_card_change(ann, None), "bob": _wait_card_change(bob, None)}
    pages = {"ann": ann, "bob": bob}
    for _ in range(4 * ITEMS):
        if cards["ann"] is None and cards["bob"] is None:
            break
        for who, page in pages.items():
            card = cards[who]
            if card is None:
                continue
            # bob rejects every fifth item he sees, so some disagree with ann.
            bob_rejects = who == "bob" and len(decided[who]) % 5 == 4
            key = "a" if not bob_rejects and accept_enabled(page) else "x"
            page.locator("h1").first.click()
            page.keyboard.press(key)
            decided[who].append((card, key))
            cards[who] = _wait_card_change(page, card)
        if len(decided["ann"]) == ITEMS // 2 and not reloaded:
            # Reload mid-queue: the reviewer, the filters and the card come back from the address.
            ann.reload()
            settle(ann)
            assert _wait_card_change(ann, None) == cards["ann"]
            reloaded = True
    assert len(decided["ann"]) == len(decided["bob"]) == ITEMS
    for who in ("ann", "bob"):
        assert len({c for c, _ in decided[who]}) == ITEMS, who  # each item once per reviewer
    # Reference calls run: each of their cards was accepted, not rejected for want of an Accept.
    assert sum(key == "a" for _, key in decided["ann"]) >= ITEMS - 6

    # Overview: each reviewer's counts and their agreement; Conflicts opens from there.
    ann.goto(f"{server.url}/?reviewer=ann")
    ann.wait_for_selector("text=Percent agreement")  # the reviewers' section is drawn last
    settle(ann)
    overview = ann.inner_text('[data-testid="stMain"]')
    assert "Percent agreement" in overview and "Krippendorff" in overview, overview[-1500:]
    assert re.search(rf"Items with 2\+ reviews\s+{ITEMS}", overview)
    conflicts = ann.get_by_role("button", name=re.compile(r"Conflicts \(\d+\)"))
    n_conflicts = int(re.search(r"\d+", conflicts.inner_text()).group(0))  # type: ignore[union-attr]
    assert n_conflicts >= 1
    conflicts.click()
    # A page switch is two script runs: wait for the conflict card itself, not for a quiet moment.
    ann.wait_for_selector("text=Reviewers disagree on this item")
    settle(ann)
    assert "decision=conflict" in ann.url
    ann.get_by_text(f"Conflict 1 of {n_conflicts}").first.wait_for()  # among the conflicts
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    ann.screenshot(path=str(SCREENSHOTS / "review_team.png"))  # the README's team section shows it
    # On a conflict card X is the lead's final reject, not one more ordinary vote (issue 39).
    ann.get_by_text("X final reject").first.wait_for()
    settle(ann)
    ann.locator("body").press("x")
    ann.get_by_text("Final: Rejected").first.wait_for()
    settle(ann)
    server.stop()

    with Store(server.db) as store:
        assert store.check_caches() == []
        stats = store.dashboard_stats()
        assert {r for r, *_ in stats.reviewers} == {"ann", "bob"}
        assert stats.counts.decision_events == 2 * ITEMS + 1  # every decision of both, one final
        assert stats.agreement.items == ITEMS and stats.counts.conflicts == n_conflicts - 1
        manifest = export(store, ExportFormat.XLAM, tmp_path / "xlam.jsonl", with_meta=True)
        exported = {r["meta"]["proposal_id"] for r in _lines(tmp_path / "xlam.jsonl")}
        for pid in exported:
            item = store.review_item(pid)
            assert item is not None and item.state == "accept"
            assert item.execution is not None and item.execution.ok and item.grade_current
        assert manifest.rows == stats.counts.accepted == len(exported)
        assert manifest.extra["left_out"]["conflict"] == n_conflicts - 1


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]
