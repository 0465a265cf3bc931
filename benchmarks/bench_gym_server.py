"""What the gym's OpenEnv server adds to a step (`codesearch gym serve`, `gym.openenv_server`).

Run: `uv run python benchmarks/bench_gym_server.py [--reps 3] [--limit N]`.

The server runs as `codesearch gym serve --port 0` in its own process on localhost; one OpenEnv
client (`CodeSearchEnvClient`, a WebSocket session, the sync wrapper a trainer's rollout loop uses)
plays the turns. For every single-call seed blueprint, on a fresh episode each time (the reset is
not timed): the turn of its reference call, through the server and with `Episode.step` in this
process, interleaved; and an empty-handed turn (one call to an unknown tool: no search, so only
the transport and the (de)serialization are left). The overhead is the median over the seeds of
(server step - in-process step), paired per seed and repetition. The goal (issue 27): at most
5 ms a step. Writes benchmarks/results/gym_server.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from codesearch_core.gym import Episode, Task, as_tasks, seed_blueprints
from codesearch_core.gym.openenv_client import CodeSearchEnvClient
from codesearch_core.gym.openenv_server import CodeSearchAction

REPO = Path(__file__).resolve().parents[1]
GOAL_MS = 5.0
NO_TOOL = [{"name": "no_such_tool", "arguments": {}}]


def start_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "codesearch_core", "gym", "serve", "--port", "0",
         "--blueprints", "seeds-all"],  # the tasks `seed_blueprints()` gives below
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stderr is not None
    for line in proc.stderr:
        if "listening on " in line:
            # Keep reading its stderr, so a chatty server never blocks on a full pipe.
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc, line.split("listening on ", 1)[1].split()[0]
    raise SystemExit(f"the server did not start (exit status {proc.wait()})")


def in_process(task: Task, calls: list[Any]) -> float:
    episode = Episode(task.blueprint, task.corpus_root)
    started = time.perf_counter()
    episode.step(calls)
    elapsed = time.perf_counter() - started
    episode.stop()
    return elapsed


def served(env: Any, task: Task, calls: list[Any]) -> float:
    env.reset(blueprint_id=task.blueprint.id)
    action = CodeSearchAction(calls=calls)
    started = time.perf_counter()
    env.step(action)
    return time.perf_counter() - started


def measure(env: Any, tasks: list[Task], reps: int, calls_of: Any) -> dict[str, float]:
    local: list[float] = []
    remote: list[float] = []
    diffs: list[float] = []
    for _ in range(reps):
        for task in tasks:
            calls = calls_of(task)
            a = in_process(task, calls)
            b = served(env, task, calls)
            local.append(a)
            remote.append(b)
            diffs.append(b - a)
    ms = 1000.0
    return {
        "in_process": statistics.median(local) * ms,
        "server": statistics.median(remote) * ms,
        "overhead": statistics.median(diffs) * ms,
        "p90_overhead": statistics.quantiles(diffs, n=10)[-1] * ms if len(diffs) > 1 else 0.0,
        "steps": float(len(diffs)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--limit", type=int, default=0, help="only the first N blueprints")
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args()

    tasks = [t for t in as_tasks(seed_blueprints()).tasks if t.blueprint.plan is None]
    if args.limit:
        tasks = tasks[: args.limit]
    load_before = os.getloadavg()[0]
    proc, url = start_server()
    try:
        with CodeSearchEnvClient(url).sync() as env:
            # Warm-up: binaries found, corpora in the page cache, the session's thread started.
            measure(env, tasks, 1, lambda t: [t.blueprint.reference_call.to_dict()])
            search = measure(
                env, tasks, args.reps, lambda t: [t.blueprint.reference_call.to_dict()]
            )
            bare = measure(env, tasks, args.reps, lambda t: NO_TOOL)
    finally:
        proc.terminate()
        proc.wait(60)
    rows = [("the reference call (one search)", search), ("no search (an unknown tool)", bare)]
    lines = [
        "# Gym OpenEnv server: overhead per step",
        "",
        f"{len(tasks)} single-call seed blueprints, {args.reps} repetitions, a fresh episode each "
        "step; `codesearch gym serve` on localhost in its own process, one OpenEnv WebSocket client "
        "(sync wrapper). Medians in ms; the overhead is the median of the paired differences. "
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; load average {load_before:.1f} at start, "
        f"{os.getloadavg()[0]:.1f} at end.",
        "",
        "| turn | steps | in-process `Episode.step` | through the server | overhead (median) | "
        "overhead (p90) | goal | met |",
        "|---|---:|---:|---:|---:|---:|---:|:---:|",
        *(
            f"| {name} | {r['steps']:.0f} | {r['in_process']:.2f} | {r['server']:.2f} | "
            f"{r['overhead']:.2f} | {r['p90_overhead']:.2f} | <= {GOAL_MS:.0f} | "
            f"{'yes' if r['overhead'] <= GOAL_MS else 'no'} |"
            for name, r in rows
        ),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if not args.no_save:
        out = REPO / "benchmarks" / "results" / "gym_server.md"
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
