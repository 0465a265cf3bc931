"""The runner against the bare tools on small calls: every single-call seed on its shipped corpus.

These calls take a few milliseconds, so fixed costs show: a sleep to batch output, a slow start
of the parser. For each seed's reference call (plans left out): the bare tool with the runner's
own argv, its output read whole through a pipe by `subprocess.run`, against `run_tool_call`
returning Findings; interleaved, `--reps` times, medians per call, then the median ratio over the
calls of each tool. Goal: <= 1.05x.

    uv run python benchmarks/bench_seed_calls.py [--reps N] [--no-save]

Writes benchmarks/results/seed_calls.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from codesearch_core.corpora import corpus_root, load_seed_blueprints  # noqa: E402
from codesearch_core.models import ToolCall  # noqa: E402
from codesearch_core.tools.argv import tool_argv  # noqa: E402
from codesearch_core.tools.runner import run_tool_call  # noqa: E402

GOAL = 1.05


def _bare(argv: list[str], root: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def _runner(call: ToolCall, root: Path) -> float:
    started = time.perf_counter()
    run_tool_call(call, root)
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args()
    cases = [
        (bp.id, bp.reference, corpus_root(bp.corpus))
        for bp in load_seed_blueprints()
        if isinstance(bp.reference, ToolCall)
    ]
    load_before = os.getloadavg()[0]
    times: dict[str, tuple[list[float], list[float]]] = {i: ([], []) for i, _, _ in cases}
    for _ in range(args.reps):
        for seed_id, call, root in cases:
            argv = tool_argv(call, root)
            times[seed_id][0].append(_bare(argv, root))
            times[seed_id][1].append(_runner(call, root))
    ratios: dict[str, list[float]] = {"ripgrep_search": [], "ast_grep_search": []}
    medians: dict[str, list[float]] = {"ripgrep_search": [], "ast_grep_search": []}
    for seed_id, call, _ in cases:
        bare, ours = (statistics.median(t) for t in times[seed_id])
        ratios[call.name.value].append(ours / bare)
        medians[call.name.value].append(bare)
    lines = [
        "# Runner vs bare tools on the seed calls",
        "",
        f"{len(cases)} single-call seeds on the shipped corpora, {args.reps} interleaved "
        f"repetitions. Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; load average {load_before:.1f} at start, "
        f"{os.getloadavg()[0]:.1f} at end.",
        "",
        "| tool | calls | bare median (ms) | median ratio | p90 ratio | goal | met |",
        "|---|---:|---:|---:|---:|---:|:---:|",
    ]
    for tool, values in ratios.items():
        if not values:
            continue
        median = statistics.median(values)
        p90 = statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]
        lines.append(
            f"| {tool} | {len(values)} | {statistics.median(medians[tool]) * 1000:.1f} | "
            f"{median:.3f}x | {p90:.3f}x | <= {GOAL}x | {'yes' if median <= GOAL else 'no'} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_save:
        out = REPO / "benchmarks" / "results" / "seed_calls.md"
        out.write_text(text, encoding="utf-8")
        print(f"written to {out}")


if __name__ == "__main__":
    main()
