"""How soon the next episode card appears after the accept key, in a real browser, at 100,000 episodes.

Builds a store of N episodes (default 100,000) fast: the seeds are ingested and every single-search
seed blueprint is played once as a 4-turn episode in the real gym (its reference search, a read of
its first expected span, the search again, then a submit of every expected span: the card issue 39
measures), each call labelled by another reviewer (the step labels the card reads), then copies of
those episodes are inserted in bulk through DuckDB (one `INSERT ... SELECT`, in this benchmark only)
until there are N: each copy has its own id and the blueprint id, trajectory and figures of the
episode it copies, so every card shows a real trajectory of a real blueprint. Then it starts `streamlit run app.py` on the store, opens the
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
from codesearch_core.corpora import corpus_root
from codesearch_core.gym import Episode, seed_blueprints, stored_episode
from codesearch_core.models import Blueprint, DecisionAction
from codesearch_core.store import EPISODE, Store, StoredEpisode

RESULTS = Path(__file__).parent / "results" / "episode_card.md"
GOAL_MS = 300.0
REVIEWER = "bench"
#: Who labelled every call of the played episodes before the walk.
LABELLER = "bench-labeller"
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
        store.episodes.save(
            [four_turns(bp) for bp in seed_blueprints() if bp.plan is None and bp.expected]
        )
        played = sum(store.queue(EPISODE).counts().values())
        for episode in store.episodes.list(limit=played):
            for turn, calls in enumerate(episode.trajectory["turns"], start=1):
                for call in range(1, len(calls) + 1):
                    store.steps.label(episode.episode_id, turn, call, "useful", LABELLER)
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


def four_turns(bp: Blueprint) -> StoredEpisode:
    """`bp` played in the gym in 4 turns: its search, a read, the search again, the submit."""
    episode = Episode(bp, corpus_root(bp.corpus))
    search = {"name": bp.reference_call.name.value, "arguments": bp.reference_call.arguments}
    first = bp.expected[0]
    episode.step([search])
    episode.step([{"name": "read_file", "arguments": {"path": first.path, "start_line": 1,
                                                      "end_line": first.end_line}}])  # fmt: skip
    episode.step([search])
    episode.step(
        [{"name": "submit", "arguments": {"locations": [s.to_dict() for s in bp.expected]}}]
    )
    return stored_episode(episode.result(), corpus=bp.corpus, engine="bench", model="")


def store_calls_ms(db: Path, decisions: int) -> list[float]:
    """What one decision costs the store: record the vote, lease the next episode, load its card
    and the card frame's figures (progress, the reviewer's seen episodes, undo) and its step
    labels."""
    times = []
    with Store(db) as store:
        current = studio.next_item_of(store, EPISODE, REVIEWER)
        for _ in range(decisions):
            assert current is not None
            start = time.perf_counter()
            store.queue(EPISODE).decide(current, DecisionAction.ACCEPT, REVIEWER)
            current = studio.next_item_of(store, EPISODE, REVIEWER)
            assert current is not None
            studio.episode_card(store, current)
            store.steps.labels(current)
            store.queue(EPISODE).counts()
            store.queue(EPISODE).progress(REVIEWER)
            store.queue(EPISODE).seen(REVIEWER)
            store.queue(EPISODE).last_undoable(REVIEWER)
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
            stored = sum(store.queue(EPISODE).counts().values())
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
        f"Store: {stored:,} open episodes ({played} seeds played in 4 turns, every call labelled, "
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
