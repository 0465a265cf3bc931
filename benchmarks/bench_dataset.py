"""Data set build: `dataset build recipes/real-code.toml` from fetched corpora, timed per stage,
with the yield (kept, verified, de-duplicated items) and synthesis time per corpus.

The issue's goal: >= 2,000 verified, de-duplicated items from >= 6 real corpora in <= 30 minutes
on 2 cores (template intents). A fresh output folder each run (no stage resumed).

    uv run python benchmarks/bench_dataset.py [--recipe recipes/real-code.toml] [--no-save]

Writes benchmarks/results/dataset.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from codesearch_core.dataset import Hooks, build_dataset, load_recipe  # noqa: E402

GOAL_ITEMS = 2000
GOAL_CORPORA = 6
GOAL_MINUTES = 30.0


class Clock:
    """When each stage started, and when synthesis finished each corpus."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.stages: dict[str, float] = {}
        self.corpus_done: list[float] = []

    def on_stage(self, stage: str, resumed: bool) -> None:
        self.stages[stage] = time.perf_counter()

    def on_progress(self, stage: str, done: int, total: int | None) -> None:
        if stage == "synthesize":
            self.corpus_done.append(time.perf_counter())

    def stage_seconds(self, ended: float) -> dict[str, float]:
        names = list(self.stages)
        ends = [self.stages[n] for n in names[1:]] + [ended]
        return {n: e - self.stages[n] for n, e in zip(names, ends, strict=True)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", type=Path, default=REPO / "recipes" / "real-code.toml")
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args()
    recipe = load_recipe(args.recipe)
    path = args.recipe.resolve()
    shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
    load = os.getloadavg()[0]
    clock = Clock()
    with tempfile.TemporaryDirectory() as tmp:
        result = build_dataset(recipe, Path(tmp) / "ds", Hooks(clock.on_stage, clock.on_progress))
        ended = time.perf_counter()
    card = result.card
    total_s = ended - clock.started
    stage_s = clock.stage_seconds(ended)
    synth_start = clock.stages["synthesize"]
    corpus_s = [
        b - a for a, b in zip([synth_start, *clock.corpus_done], clock.corpus_done, strict=False)
    ]
    kept_by_corpus = {k: v["count"] for k, v in card["mix"]["corpus"].items()}
    synth = card["stages"]["synthesis"]
    real = [c for c, n in kept_by_corpus.items() if n > 0]
    kept = card["stages"]["kept"]
    splits = ", ".join(f"{k} {v['items']}" for k, v in card["splits"].items())
    lines = [
        f"# Data set build: {shown}",
        "",
        f"`dataset build {shown}` into a fresh folder, template intents. "
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()};"
        f" load average {load:.1f} at start. Goal: >= {GOAL_ITEMS} verified, de-duplicated items "
        f"from >= {GOAL_CORPORA} real corpora in <= {GOAL_MINUTES:.0f} minutes on 2 cores.",
        "",
        f"**{kept} items** ({splits}) "
        f"from {len(real)} corpora in {total_s / 60:.1f} minutes; drafted {card['stages']['drafted']}"
        f" (seeds {card['stages']['seeds']}), verified ok {card['stages']['verified_ok']}; dropped "
        f"{json.dumps(card['stages']['dropped'], sort_keys=True)}.",
        "",
        "| stage | seconds |",
        "|---|---:|",
        *(f"| {name} | {s:.1f} |" for name, s in stage_s.items()),
        "",
        "| corpus | synthesized (kept drafts) | synthesis seconds | items in the data set |",
        "|---|---:|---:|---:|",
    ]
    # Synthesis finishes the corpora in the recipe's order (the card's dict is sorted by name).
    for name, secs in zip(recipe.corpus_names, corpus_s, strict=False):
        counts = synth.get(name, {})
        lines.append(f"| {name} | {counts.get('kept', 0)} | {secs:.1f} | "
                     f"{kept_by_corpus.get(name, 0)} |")  # fmt: skip
    d = card["diversity"]
    lines += [
        "",
        f"Mix: tools {json.dumps({k: v['count'] for k, v in card['mix']['tool'].items()})}; "
        f"{len(card['mix']['rule'])} rules, {len(card['mix']['language'])} languages; "
        f"{d['distinct_bigrams']} distinct intent 2-grams, the most common opening "
        f"{d['top_opening_share']:.1%}.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_save:
        out = REPO / "benchmarks" / "results" / "dataset.md"
        out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
