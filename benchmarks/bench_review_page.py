"""How fast the Review page answers a decision with 100,000 items in the store.

Builds the store with `bench_store.build` (100,000 blueprints, 100,000 proposals with runs, grades and
decisions), opens the Review page in Streamlit's AppTest with a reviewer, and times Skip clicks (some items are invalid calls, which cannot be accepted):
the callback records the event and picks the next item, then the page renders the new card. AppTest
re-runs the whole page on each click (a browser re-runs only the card's fragment), so this is an
upper bound. Baseline in the same run: the store calls one action makes, with no Streamlit at all.
Goal (issue 5): well under a second.

    uv run python benchmarks/bench_review_page.py [--items N] [--clicks N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import streamlit as st

# A sibling script, found because Python puts the running script's folder on sys.path.
from bench_store import build
from streamlit.testing.v1 import AppTest

from codesearch_core import studio
from codesearch_core.models import DecisionAction
from codesearch_core.store import PROPOSAL
from codesearch_core.store.core import Store
from codesearch_core.store.filters import QueueFilters
from codesearch_core.store.types import DecisionState

APP = Path(__file__).resolve().parent.parent / "app.py"
GOAL_MS = 1000.0


def store_calls_ms(
    db: Path,
    clicks: int,
    action: DecisionAction = DecisionAction.SKIP,
    filters: QueueFilters | None = None,
) -> list[float]:
    """What one decision costs the store: record it, find the next item, load it, place it."""
    filters = filters or QueueFilters()
    times = []
    with Store(db) as store:
        current = studio.next_item_id(store, filters)
        for _ in range(clicks):
            assert current is not None
            start = time.perf_counter()
            store.queue(PROPOSAL).decide(current, action, filters.reviewer or "bench")
            current = studio.next_item_id(store, filters, after_id=current)
            assert current is not None
            item = store.review_item(current)
            store.queue_position(replace(filters, decision=DecisionState.ANY), current)
            store.review_queue(filters, limit=0)
            studio.finding_rows_for(item) if item else None
            times.append((time.perf_counter() - start) * 1000)
    return times


def page_clicks_ms(db: Path, clicks: int) -> list[float]:
    os.environ["CODESEARCH_DB"] = str(db)
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    at.switch_page("pages/review.py").run()
    at.text_input(key="reviewer").input("bench").run()
    at.button(key="skip").click().run()  # warm: imports, caches, first queries
    times = []
    for _ in range(clicks):
        start = time.perf_counter()
        at.button(key="skip").click().run()
        times.append((time.perf_counter() - start) * 1000)
        assert not at.exception, at.exception
    st.cache_resource.clear()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--clicks", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        start = time.perf_counter()
        build(db, args.items, args.items)
        print(
            f"built {args.items:,} blueprints and proposals in {time.perf_counter() - start:.1f} s"
        )
        bare = statistics.median(store_calls_ms(db, args.clicks))
        page = statistics.median(page_clicks_ms(db, args.clicks))
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs")
    print(f"store calls of one decision (baseline): {bare:8.1f} ms median")
    print(f"Review page, Skip click (AppTest):      {page:8.1f} ms median  ({page / bare:.1f}x)")
    print(f"goal < {GOAL_MS:.0f} ms: {'met' if page < GOAL_MS else 'NOT met'}")


if __name__ == "__main__":
    main()
