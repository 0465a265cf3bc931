"""The gym against the bare tools: what an environment step costs over the tool it runs, and how
many tool calls per second the reference policy gets through the environment.

1. Step overhead: for every single-call seed, the bare tool with the runner's own argv (its
   output read whole through a pipe) against `Episode.step([call])` (checking the call, running
   it on the gym's pool, parsing, the observation); interleaved, `--reps` times, medians per call,
   then the median ratio over the calls. Goal: <= 1.1x.
2. Throughput: the reference policy over the seeds (`evaluate_agent`, episodes on a few threads),
   tool calls per second of wall time, against the same calls run bare on the same number of
   threads (the ceiling the tools set). Goal: >= 200 calls/s on 2 cores, over the shipped
   corpora's seeds; the real packages' seeds (click, express) are reported apart: their whole-
   package ast-grep calls cost the bare tool 50-400 ms each.

    uv run python benchmarks/bench_gym.py [--reps N] [--rounds N] [--no-save]

Writes benchmarks/results/gym.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from codesearch_core.config import usable_cores  # noqa: E402
from codesearch_core.gym import (  # noqa: E402
    Episode,
    ReferencePolicy,
    Task,
    as_tasks,
    evaluate_agent,
    seed_blueprints,
)
from codesearch_core.tools.argv import tool_argv  # noqa: E402

STEP_GOAL = 1.1
RATE_GOAL = 200.0
REAL_CORPORA = frozenset({"click", "express"})


def _bare(argv: list[str], root: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def _step(task: Task) -> float:
    episode = Episode(task.blueprint, task.corpus_root)
    call = task.blueprint.reference_call.to_dict()
    started = time.perf_counter()
    episode.step([call])
    return time.perf_counter() - started


def step_overhead(tasks: list[Task], reps: int) -> tuple[int, float, float, float]:
    """(calls, bare median ms, median ratio, p90 ratio) over the single-call seeds."""
    single = [t for t in tasks if t.blueprint.plan is None]
    times: dict[str, tuple[list[float], list[float]]] = {t.blueprint.id: ([], []) for t in single}
    for _ in range(reps):
        for t in single:
            argv = tool_argv(t.blueprint.reference_call, t.corpus_root)
            times[t.blueprint.id][0].append(_bare(argv, t.corpus_root))
            times[t.blueprint.id][1].append(_step(t))
    ratios, bares = [], []
    for bare, ours in times.values():
        ratios.append(statistics.median(ours) / statistics.median(bare))
        bares.append(statistics.median(bare))
    p90 = statistics.quantiles(ratios, n=10)[-1]
    return len(single), statistics.median(bares) * 1000, statistics.median(ratios), p90


def _calls_of(tasks: list[Task]) -> list[tuple[list[str], Path]]:
    """The argv of every search the reference policy makes on `tasks` (played once to see them)."""
    out = []
    for t in tasks:
        episode = Episode(t.blueprint, t.corpus_root)
        ReferencePolicy().play(episode)
        for turn in episode.stop().turns:
            for o in turn:
                if o.call.name != "submit":
                    from codesearch_core.tools import parse_tool_call

                    call = parse_tool_call({"name": o.call.name, "arguments": o.call.arguments})
                    out.append((tool_argv(call, t.corpus_root), t.corpus_root))
    return out


def throughput(tasks: list[Task], rounds: int, workers: int) -> tuple[int, float, float]:
    """(calls per round, env calls/s, bare calls/s): best of `rounds` each."""
    argvs = _calls_of(tasks)
    env, bare = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        evaluate_agent(ReferencePolicy(), tasks, workers=workers)
        env.append(len(argvs) / (time.perf_counter() - started))
        started = time.perf_counter()
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(lambda a: _bare(*a), argvs))
        bare.append(len(argvs) / (time.perf_counter() - started))
    return len(argvs), max(env), max(bare)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args()
    tasks = list(as_tasks(seed_blueprints()).tasks)
    shipped = [t for t in tasks if t.blueprint.corpus not in REAL_CORPORA]
    real = [t for t in tasks if t.blueprint.corpus in REAL_CORPORA]
    workers = 2 * usable_cores()
    load_before = os.getloadavg()[0]
    n, bare_ms, ratio, p90 = step_overhead(shipped, args.reps)
    rates = [("shipped corpora", *throughput(shipped, args.rounds, workers))]
    if real:
        rates.append(("real packages (click, express)", *throughput(real, args.rounds, workers)))
    lines = [
        "# The gym against the bare tools",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; load average {load_before:.1f} at start, "
        f"{os.getloadavg()[0]:.1f} at end.",
        "",
        "## One environment step against the bare tool (single-call seeds, shipped corpora)",
        "",
        "| calls | bare median (ms) | median ratio | p90 ratio | goal | met |",
        "|---:|---:|---:|---:|---:|:---:|",
        f"| {n} | {bare_ms:.1f} | {ratio:.3f}x | {p90:.3f}x | <= {STEP_GOAL}x | "
        f"{'yes' if ratio <= STEP_GOAL else 'no'} |",
        "",
        f"## Reference policy through the environment ({workers} threads, best of {args.rounds})",
        "",
        "| seeds | tool calls | env calls/s | bare calls/s | env / bare | goal | met |",
        "|---|---:|---:|---:|---:|---:|:---:|",
    ]
    for name, calls, env, bare in rates:
        goal = f">= {RATE_GOAL:.0f}/s" if name == "shipped corpora" else "-"
        met = ("yes" if env >= RATE_GOAL else "no") if name == "shipped corpora" else "-"
        lines.append(
            f"| {name} | {calls} | {env:.0f} | {bare:.0f} | {env / bare:.2f} | {goal} | {met} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_save:
        out = REPO / "benchmarks" / "results" / "gym.md"
        out.write_text(text, encoding="utf-8")
        print(f"written to {out}")


if __name__ == "__main__":
    main()
