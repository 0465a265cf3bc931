"""How soon the next episode card appears after the accept key, in a real browser, at 100,000 episodes.

Builds a store of N episodes (default 100,000) fast: the seeds are ingested and the reference
policy plays every seed blueprint once (`gym.rollouts`, as `codesearch rollouts --engine reference
--k 1 --blueprints seeds` stores them), then copies of those episodes are inserted in bulk through
DuckDB (one `INSERT ... SELECT`, in this benchmark only) until there are N: each copy has its own id
and the blueprint id, trajectory and figures of the episode it copies, so every card shows a real
trajectory of a real blueprint. Then it starts `streamlit run app.py` on the store, opens the
Episodes queue of the Review page in Debian's Chromium (Playwright) and presses A (accept: records
the vote and leases the next episode) N times, each time from the key press until the next card's
episode id is on screen. Baseline in the same run: the store calls one decision makes, with no
Streamlit and no browser. Goal (issue 30): a median within 300 ms.

    uv run python benchmarks/bench_episode_card.py [--episodes N] [--presses N] [--no-save]

Writes benchmarks/results/episode_card.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import duckdb

# Sibling script, found because Python puts the running script's folder on sys.path; the studio
# is started as the browser tests start it.
from bench_review_browser import READ_MS, browser_presses_ms

from codesearch_core import ingest, studio
from codesearch_core.gym import ReferencePolicy, as_tasks, rollouts, seed_blueprints
from codesearch_core.models import DecisionAction
from codesearch_core.store import EPISODE, Store

RESULTS = Path(__file__).parent / "results" / "episode_card.md"
GOAL_MS = 300.0
REVIEWER = "bench"
#: The card's episode id, as the page shows it ("Episode `1a2b3c4d5e` · reference · ...").
CARD_ID_JS = """() => {
    const main = document.querySelector('[data-testid="stMain"]');
    const m = main && main.innerText.match(/Episode `?([0-9a-f]{10})`? ·/);
    return m ? m[1] : null;
}"""


def build(path: Path, n_episodes: int) -> int:
    """Fill a fresh store with `n_episodes` open episodes; how many were played (the rest are
    copies of those, see the module docstring)."""
    with Store(path) as store:
        ingest.ensure_seeded(store)
        rollouts(ReferencePolicy(), as_tasks(seed_blueprints()).tasks, store, k=1)
        played = sum(store.episode_counts().values())
    copies = max(n_episodes - played, 0)
    conn = duckdb.connect(str(path))
    try:
        # Copy i of played episode (i % played): a new id (sha256 of the original's and i), the
        # original's blueprint, trajectory and figures; stored in the order of i, after the played.
        conn.execute(f"""
            INSERT INTO episodes (episode_id, blueprint_id, corpus, engine, model, sampling,
                settings, snapshot, tool_versions, reward, components, span_f1, turns, calls,
                invalid_calls, end_reason, trajectory, created_at)
            SELECT sha256(e.episode_id || '#' || i), e.blueprint_id, e.corpus, e.engine, e.model,
                e.sampling, e.settings, e.snapshot, e.tool_versions, e.reward, e.components,
                e.span_f1, e.turns, e.calls, e.invalid_calls, e.end_reason, e.trajectory,
                e.created_at + to_seconds(i)
            FROM range({copies}) t(i)
            JOIN (SELECT *, row_number() OVER (ORDER BY seq) - 1 AS k FROM episodes) e
                ON e.k = i % {played}
            ORDER BY i
        """)
    finally:
        conn.close()
    return played


def store_calls_ms(db: Path, decisions: int) -> list[float]:
    """What one decision costs the store: record the vote, lease the next episode, load its card
    and the card frame's figures (progress, the reviewer's seen episodes, undo)."""
    times = []
    with Store(db) as store:
        current = studio.next_episode_id(store, REVIEWER)
        for _ in range(decisions):
            assert current is not None
            start = time.perf_counter()
            store.record_decision(current, DecisionAction.ACCEPT, REVIEWER, kind=EPISODE)
            current = studio.next_episode_id(store, REVIEWER)
            assert current is not None
            studio.episode_card(store, current)
            store.episode_counts()
            store.queue_progress(REVIEWER, kind=EPISODE)
            store.seen_items(REVIEWER, kind=EPISODE)
            store.last_undoable(REVIEWER, kind=EPISODE)
            times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--presses", type=int, default=30)
    parser.add_argument("--no-save", action="store_true", help="print only; no results file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "studio.duckdb"
        start = time.perf_counter()
        played = build(db, args.episodes)
        built_s = time.perf_counter() - start
        with Store(db) as store:
            stored = sum(store.episode_counts().values())
        load_before = os.getloadavg()[0]
        # The baseline decides as another reviewer would: the browser's reviewer starts afresh.
        bare = store_calls_ms(db, args.presses)
        times = browser_presses_ms(
            Path(tmp),
            args.presses,
            path=f"/review?reviewer={REVIEWER}-browser&queue=episodes",
            key="a",
            card_id_js=CARD_ID_JS,
        )
        load_after = os.getloadavg()[0]
    median = statistics.median(times)
    p90 = statistics.quantiles(times, n=10)[-1]
    bare_median = statistics.median(bare)
    verdict = "met" if median <= GOAL_MS else "NOT met"
    lines = [
        "# Episodes queue: the next episode card in a real browser",
        "",
        f"`uv run python benchmarks/bench_episode_card.py --episodes {args.episodes} --presses "
        f"{args.presses}` on {platform.machine()}, CPython {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, niceness {os.nice(0)}; 1-minute load average "
        f"{load_before:.1f} before and {load_after:.1f} after.",
        "",
        f"Store: {stored:,} open episodes ({played} played by the reference policy on the seeds, "
        f"the rest bulk copies of them with their own ids; built in {built_s:.1f} s). Chromium "
        f"(headless) on the Episodes queue (`/review?queue=episodes`); each press of A, from the "
        f"key to the next card's episode id on screen ({READ_MS} ms after the card was drawn "
        "whole, not counted).",
        "",
        "| what | median | p90 | x baseline | goal |",
        "|---|---:|---:|---:|---:|",
        f"| store calls of one decision, no Streamlit (baseline) | {bare_median:.1f} ms | "
        f"{statistics.quantiles(bare, n=10)[-1]:.1f} ms | 1.0 |  |",
        f"| key press to next episode card, Chromium | {median:.1f} ms | {p90:.1f} ms | "
        f"{median / bare_median:.1f} | <= {GOAL_MS:.0f} ms {verdict} |",
        "",
    ]
    if not args.no_save:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
