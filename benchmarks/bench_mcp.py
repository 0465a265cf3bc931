"""What `codesearch mcp` adds to a gym step (`gym.mcp_server`, the MCP SDK's stdio transport).

Run: `uv run python benchmarks/bench_mcp.py [--tasks 8] [--reps 20]`.

For each of the first `--tasks` single-call seeds of the fixture corpora: `codesearch mcp --task
ID` in its own process, started by the MCP SDK's own client over stdio (`Client(stdio_client(...))`,
as a harness starts it; the start is not timed), with room for every call (`--max-turns 64`, a
rate bound above what one client sends). Then, `--reps` times, interleaved: the reference call as
one MCP `tools/call` (the round trip: JSON-RPC over the pipes, the server's thread hand-over, one
`Episode.step`), and the same call as one `Episode.step` in this process on an episode with the
same settings; and the same pair for a call to an unknown tool (no search: only the transport and
the gym's check are left). The overhead is the median of the paired differences. The goal (issue
40): at most 5 ms above the gym's own step. Writes benchmarks/results/mcp.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from codesearch_core.corpora import SEEDS, load_seed_set
from codesearch_core.gym import Episode, GymSettings, Task, as_tasks

REPO = Path(__file__).resolve().parents[1]
GOAL_MS = 5.0
MAX_TURNS = 64
NO_TOOL: dict[str, Any] = {"name": "no_such_tool", "arguments": {}}


def in_process(episode: Episode, call: dict[str, Any]) -> float:
    started = time.perf_counter()
    episode.step([call])
    return time.perf_counter() - started


async def through_mcp(client: Client, call: dict[str, Any]) -> float:
    started = time.perf_counter()
    await client.call_tool(call["name"], call["arguments"])
    return time.perf_counter() - started


async def measure_task(task: Task, reps: int) -> dict[str, list[tuple[float, float]]]:
    """(in-process, MCP) seconds for each rep of the reference call and of the unknown tool."""
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "codesearch_core",
            "mcp",
            "--task",
            task.blueprint.id,
            "--max-turns",
            str(MAX_TURNS),
            "--rate",
            "10000",
        ],
        cwd=str(REPO),
    )
    settings = GymSettings(max_turns=MAX_TURNS, max_parallel=1)  # the server's: a call a turn
    local = Episode(task.blueprint, task.corpus_root, settings)
    search = task.blueprint.reference_call.to_dict()
    pairs: dict[str, list[tuple[float, float]]] = {"search": [], "bare": []}
    async with Client(stdio_client(params), read_timeout_seconds=120) as client:
        # Warm-up: the server's first call (its thread pool, the binaries found, the page cache).
        await through_mcp(client, search)
        in_process(local, search)
        for _ in range(reps):
            for kind, call in (("search", search), ("bare", NO_TOOL)):
                a = in_process(local, call)
                b = await through_mcp(client, call)
                pairs[kind].append((a, b))
    local.stop()
    return pairs


def summary(pairs: list[tuple[float, float]]) -> dict[str, float]:
    ms = 1000.0
    diffs = [b - a for a, b in pairs]
    return {
        "in_process": statistics.median(a for a, _ in pairs) * ms,
        "mcp": statistics.median(b for _, b in pairs) * ms,
        "overhead": statistics.median(diffs) * ms,
        "p90_overhead": statistics.quantiles(diffs, n=10)[-1] * ms if len(diffs) > 1 else 0.0,
        "calls": float(len(pairs)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=8, help="single-call seeds measured")
    parser.add_argument("--reps", type=int, default=20, help="calls of each kind per seed")
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args()
    if not 2 * args.reps + 1 < MAX_TURNS:
        raise SystemExit(f"--reps must be at most {(MAX_TURNS - 2) // 2}")

    tasks = [t for t in as_tasks(load_seed_set(SEEDS)).tasks if t.blueprint.plan is None]
    tasks = tasks[: args.tasks]
    load_before = os.getloadavg()[0]
    search: list[tuple[float, float]] = []
    bare: list[tuple[float, float]] = []
    for task in tasks:
        pairs = anyio.run(measure_task, task, args.reps)
        search += pairs["search"]
        bare += pairs["bare"]
    rows = [
        ("the reference call (one search)", summary(search)),
        ("no search (an unknown tool)", summary(bare)),
    ]
    lines = [
        "# Gym MCP server: round trip per call",
        "",
        f"{len(tasks)} single-call seeds of the fixture corpora, {args.reps} calls of each kind "
        "per seed, interleaved; `codesearch mcp --task ID` in its own process, driven by the MCP "
        "SDK's client over stdio; the same call as one `Episode.step` in this process on an "
        "episode with the same settings. Medians in ms; the overhead is the median of the paired "
        f"differences. Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; load average {load_before:.1f} at start, "
        f"{os.getloadavg()[0]:.1f} at end.",
        "",
        "| call | calls | in-process `Episode.step` | through MCP (stdio) | overhead (median) | "
        "overhead (p90) | goal | met |",
        "|---|---:|---:|---:|---:|---:|---:|:---:|",
        *(
            f"| {name} | {r['calls']:.0f} | {r['in_process']:.2f} | {r['mcp']:.2f} | "
            f"{r['overhead']:.2f} | {r['p90_overhead']:.2f} | <= {GOAL_MS:.0f} | "
            f"{'yes' if r['overhead'] <= GOAL_MS else 'no'} |"
            for name, r in rows
        ),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if not args.no_save:
        out = REPO / "benchmarks" / "results" / "mcp.md"
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
