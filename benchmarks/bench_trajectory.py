"""How fast the trajectory view of a 4-turn, 32-call episode is built and drawn.

Plays the episode in the real gym on a seed blueprint (each turn: the reference search four times
and four reads around the expected spans, 8 calls; the fourth turn ends with the submit), then
times (1) building the view (`studio.trajectory_view`: parsing every observation, diffing each
search's shown findings and each read against the expected spans, the submit diffed), the baseline
with no Streamlit, and (2) drawing it (`pages/_trajectory.show` in Streamlit's AppTest: every call,
its findings in the corpus files, the reward). Goal (issue 30): the view renders within 0.5 s.

    uv run python benchmarks/bench_trajectory.py [--reps N] [--no-save]

Writes benchmarks/results/trajectory.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from streamlit.testing.v1 import AppTest

from codesearch_core import studio
from codesearch_core.corpora import corpus_root, load_seed_blueprints
from codesearch_core.gym import DEFAULT_SETTINGS, Episode
from codesearch_core.models import Blueprint

GOAL_MS = 500.0
TURNS, CALLS_PER_TURN = 4, 8


def seed() -> Blueprint:
    return next(b for b in load_seed_blueprints() if b.plan is None and len(b.expected) >= 2)


def played(bp: Blueprint) -> dict[str, Any]:
    episode = Episode(bp, corpus_root(bp.corpus), DEFAULT_SETTINGS)
    reads = [
        {
            "name": "read_file",
            "arguments": {
                "path": s.path,
                "start_line": max(1, s.start_line - 5),
                "end_line": s.end_line + 5,
            },
        }
        for s in (bp.expected * 4)[:4]
    ]
    search = bp.reference_call.to_dict()
    for turn in range(TURNS):
        calls = [search] * 4 + reads
        if turn == TURNS - 1:
            calls[-1] = {"name": "submit", "arguments": {"locations": [bp.expected[0].to_dict()]}}
        episode.step(calls)
    trajectory = episode.stop().to_dict()
    assert sum(len(t) for t in trajectory["turns"]) == TURNS * CALLS_PER_TURN
    return trajectory


def _draw() -> None:
    # The AppTest script: the view of the episode the benchmark wrote, drawn by the page module.
    import json as json_
    import os as os_
    from pathlib import Path as Path_

    from codesearch_core import studio as studio_
    from codesearch_core.corpora import load_seed_blueprints as seeds
    from pages import _trajectory

    data = json_.loads(Path_(os_.environ["BENCH_TRAJECTORY"]).read_text(encoding="utf-8"))
    bp = next(b for b in seeds() if b.id == data["blueprint_id"])
    _trajectory.show(studio_.trajectory_view(data, bp, corpus=bp.corpus), key="bench")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args()
    bp = seed()
    trajectory = played(bp)
    build = []
    for _ in range(args.reps):
        start = time.perf_counter()
        view = studio.trajectory_view(trajectory, bp, corpus=bp.corpus)
        build.append((time.perf_counter() - start) * 1000)
    assert len(view.turns) == TURNS
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trajectory.json"
        path.write_text(json.dumps(trajectory), encoding="utf-8")
        os.environ["BENCH_TRAJECTORY"] = str(path)
        at = AppTest.from_function(_draw, default_timeout=60)
        at.run()  # warm: imports, the corpus files read into the cache
        assert not at.exception, at.exception
        draw = []
        for _ in range(args.reps):
            start = time.perf_counter()
            at.run()
            draw.append((time.perf_counter() - start) * 1000)
            assert not at.exception, at.exception
    drawn = statistics.median(draw)
    load = os.getloadavg()[0]
    text = "\n".join(
        [
            "# Trajectory view: a 4-turn, 32-call episode",
            "",
            f"Seed `{bp.id}` played in the real gym ({TURNS} turns of {CALLS_PER_TURN} calls: the "
            "reference search four times and four reads, the last call the submit); "
            f"{args.reps} repetitions, medians in ms. Machine: {platform.machine()}, "
            f"{os.cpu_count()} CPUs, Python {platform.python_version()}; load average {load:.1f}.",
            "",
            "| step | median ms | goal | met |",
            "|---|---:|---:|:---:|",
            f"| build the view (`studio.trajectory_view`, no Streamlit) | "
            f"{statistics.median(build):.1f} | | |",
            f"| build and draw it (`pages/_trajectory.show` in AppTest) | {drawn:.1f} | "
            f"<= {GOAL_MS:.0f} | {'yes' if drawn <= GOAL_MS else 'no'} |",
            "",
        ]
    )
    print(text)
    if not args.no_save:
        out = Path(__file__).resolve().parent / "results" / "trajectory.md"
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
