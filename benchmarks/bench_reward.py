"""How fast the RL reward scores completions (`codesearch_core.export.CodeSearchReward`).

Run: `uv run python benchmarks/bench_reward.py [--reps 3] [--generations 8] [--workers N]`.

Completions over the single-call seed blueprints on the shipped corpora, written as a Qwen /
Hermes model writes them (`<tool_call>{json}</tool_call>`): the reference call, the mutation
engine's wrong calls, and text that is no call. Two workloads, each with a cold cache per repetition:

* `distinct`: every completion a different call (the worst case: every one is a tool run);
* `grpo`: GRPO's batches: `--generations` completions per prompt drawn from that blueprint's
  reference, mutations and non-calls (a group repeats calls, which run once).

Each workload runs with the reward's own thread pool (`--workers`, default: the reward's default,
four threads per CPU: each thread mostly waits for a tool's child process) and, for comparison,
with one thread per CPU. The baseline is the bare runner (`run_tool_call`, one after another) over
the distinct calls. The goal (issue 18) is at least 200 completions/s on 2 cores with every
completion a new call. Writes benchmarks/results/reward.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import time
from pathlib import Path

from codesearch_core.corpora import corpus_root, load_seed_blueprints
from codesearch_core.engines import MutationEngine
from codesearch_core.export import CodeSearchReward
from codesearch_core.export.rl_reward import THREADS_PER_CPU
from codesearch_core.models import Blueprint, ToolCall
from codesearch_core.tools import run_tool_call

REPO = Path(__file__).resolve().parents[1]
GOAL = 200.0
NOT_CALLS = ("I would search the code for it.", "<tool_call>\n{broken\n</tool_call>")


def hermes(call: ToolCall) -> str:
    body = {"name": call.name.value, "arguments": dict(call.arguments)}
    return f"<tool_call>\n{json.dumps(body)}\n</tool_call>"


def candidates(blueprints: list[Blueprint]) -> dict[str, list[ToolCall]]:
    """Per blueprint: its reference call, then the mutation engine's calls for it."""
    calls = {bp.id: [bp.reference_call] for bp in blueprints}
    for proposal in MutationEngine().propose(blueprints, n=6):
        if proposal.call is not None and proposal.call not in calls[proposal.blueprint_id]:
            calls[proposal.blueprint_id].append(proposal.call)
    return calls


def distinct_batch(calls: dict[str, list[ToolCall]]) -> tuple[list[str], list[str]]:
    texts, ids = [], []
    for bp_id, options in calls.items():
        for call in options:
            texts.append(hermes(call))
            ids.append(bp_id)
    return texts, ids


def grpo_batch(
    calls: dict[str, list[ToolCall]], generations: int, seed: int = 0
) -> tuple[list[str], list[str]]:
    rnd = random.Random(seed)
    texts, ids = [], []
    for bp_id, options in calls.items():
        pool = [hermes(c) for c in options] + [hermes(options[0])] * 2 + list(NOT_CALLS)
        for _ in range(generations):
            texts.append(rnd.choice(pool))
            ids.append(bp_id)
    return texts, ids


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (the tools), user and system."""
    me, tools = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + tools.ru_utime + tools.ru_stime


def measure(
    blueprints: list[Blueprint], texts: list[str], ids: list[str], workers: int, reps: int
) -> tuple[float, float, dict[str, int]]:
    """Best completions/s over `reps`, each with a new reward function (a cold cache), and the
    least CPU milliseconds per completion (this process and the tools it ran). The CPU figure
    does not depend on what else the machine runs: on idle cores, `cores * 1000 / cpu_ms` is the
    rate the work allows."""
    best, least_cpu, stats = 0.0, float("inf"), {}
    for _ in range(reps):
        with CodeSearchReward(blueprints, workers=workers) as reward:
            cpu, started = cpu_seconds(), time.perf_counter()
            values = reward(prompts=[None] * len(texts), completions=texts, blueprint_id=ids)
            rate = len(values) / (time.perf_counter() - started)
            least_cpu = min(least_cpu, (cpu_seconds() - cpu) * 1000 / len(values))
            if rate > best:
                best, stats = rate, dict(reward.stats)
    return best, least_cpu, stats


def bare(blueprints: list[Blueprint], calls: dict[str, list[ToolCall]], reps: int) -> float:
    roots = {bp.id: corpus_root(bp.corpus) for bp in blueprints}
    jobs = [(call, roots[bp_id]) for bp_id, options in calls.items() for call in options]
    best = 0.0
    for _ in range(reps):
        started = time.perf_counter()
        for call, root in jobs:
            run_tool_call(call, root)
        best = max(best, len(jobs) / (time.perf_counter() - started))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--generations", type=int, default=8)
    parser.add_argument(
        "--workers", type=int, default=THREADS_PER_CPU * (os.cpu_count() or 2), help="threads"
    )
    parser.add_argument("--limit", type=int, default=0, help="only the first N blueprints")
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args()

    blueprints = [bp for bp in load_seed_blueprints() if bp.plan is None]
    if args.limit:
        blueprints = blueprints[: args.limit]
    calls = candidates(blueprints)
    load_before = os.getloadavg()[0]
    # One warm-up pass: binaries found, corpora in the page cache, as in a training run.
    warm_texts, warm_ids = distinct_batch(calls)
    measure(blueprints, warm_texts, warm_ids, args.workers, 1)
    cores = os.cpu_count() or 2

    rows = []
    baseline = bare(blueprints, calls, args.reps)
    one_per_cpu = os.cpu_count() or 2
    for name, (texts, ids) in (
        ("distinct", distinct_batch(calls)),
        ("grpo", grpo_batch(calls, args.generations)),
    ):
        for workers in dict.fromkeys((args.workers, one_per_cpu)):
            rate, cpu_ms, stats = measure(blueprints, texts, ids, workers, args.reps)
            rows.append((f"{name}, {workers} threads", len(texts), stats["runs"], rate, cpu_ms))
    lines = [
        "# RL reward: completions/s",
        "",
        f"{len(blueprints)} single-call seed blueprints on the shipped corpora, "
        f"best of {args.reps} (a cold cache each). Machine: "
        f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; load "
        f"average {load_before:.1f} at start, {os.getloadavg()[0]:.1f} at end.",
        "",
        "CPU ms per completion counts this process and the tools it ran (user + system); "
        f"{cores} idle cores allow `{cores} * 1000 / CPU ms` completions/s (other load inflates "
        "CPU time as well, through shared caches, so this errs low).",
        "",
        f"| workload | completions | tool runs | completions/s | CPU ms per completion | "
        f"{cores} idle cores allow | goal | met |",
        "|---|---:|---:|---:|---:|---:|---:|:---:|",
        *(
            f"| {name} | {n:,} | {runs:,} | {rate:,.0f} | {cpu_ms:.2f} | "
            f"{cores * 1000 / cpu_ms:,.0f} | >= {GOAL:.0f} | {'yes' if rate >= GOAL else 'no'} |"
            for name, n, runs, rate, cpu_ms in rows
        ),
        f"| bare runner, sequential (baseline) | {len(warm_texts):,} | {len(warm_texts):,} | "
        f"{baseline:,.0f} | | | | |",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if not args.no_save:
        out = REPO / "benchmarks" / "results" / "reward.md"
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
