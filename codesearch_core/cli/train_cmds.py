"""Sub-command: train. `codesearch train sft|rft|grpo --model M --data DIR --out OUT` fine-tunes a
model on a built data set's `train` split over TRL. The rows are built here (no torch needed);
the training runs in the python that has torch and TRL (this one, or the venv
`.ci/vllm_venv.sh` builds), started for you: one command in whichever venv you are in.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from codesearch_core.errors import InputFileError

EXIT_INTERRUPTED = 130

_MODES = {
    "sft": "supervised fine-tuning on the split's one-call items (and accepted episodes)",
    "rft": "rejection sampling: the model plays the split's tasks in the gym, the verified "
    "episodes are kept, then SFT on them",
    "grpo": "GRPO with the gym as TRL's environment (multi-turn episodes, the gym's reward)",
}


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "train",
        help="fine-tune a model on a data set: sft, rft or grpo (TRL, in the torch venv)",
        description=(
            "Train --model on the train split of --data (a folder `codesearch dataset build` "
            "wrote) into --out; a run record (model, data set card sha256, settings, the result's "
            "sha256) is written beside it as OUT.run.json. Runs with torch and TRL: this python's "
            "when it has them, else the venv of .ci/vllm_venv.sh ($CODESEARCH_VLLM_VENV). Ctrl-C "
            "stops cleanly (exit 130) and leaves no model folder. Rows longer than the model's "
            "context are left out and counted."
        ),
    )
    modes = p.add_subparsers(dest="mode", required=True, metavar="MODE")
    for mode, text in _MODES.items():
        m = modes.add_parser(mode, help=text, description=text)
        _add_common(m)
        if mode == "sft":
            m.add_argument("--episodes", action="store_true",
                           help="add the store's accepted episodes (hf-agent rows; --db)")  # fmt: skip
            m.add_argument("--db", type=Path, default=None, metavar="PATH",
                           help="the store (--episodes)")  # fmt: skip
        if mode == "rft":
            m.add_argument("--k", type=int, default=4, help="episodes per task (default 4)")
            m.add_argument("--min-reward", type=float, default=0.9, metavar="R",
                           help="keep episodes with at least this reward (default 0.9)")  # fmt: skip
            m.add_argument("--temperature", type=float, default=1.0, help="sampling (default 1.0)")
            m.add_argument("--max-new-tokens", type=int, default=384, metavar="N",
                           help="tokens per turn (default 384)")  # fmt: skip
            m.add_argument("--sampler", choices=("hf", "vllm", "reference"), default="hf",
                           help="who plays the rollouts: hf (the model, transformers' generate; "
                           "the default), vllm (the model in vLLM, faster on a GPU) or reference "
                           "(the blueprints' own calls, no model: day-one agent data)")  # fmt: skip
        if mode == "grpo":
            m.add_argument("--num-generations", type=int, default=4, metavar="G",
                           help="episodes per prompt in a group (default 4)")  # fmt: skip
            m.add_argument("--max-completion-length", type=int, default=512, metavar="N",
                           help="tokens of an episode's completion, tool results included "
                           "(default 512)")  # fmt: skip
        if mode in ("rft", "grpo"):
            m.add_argument("--max-turns", type=int, default=4, help="turns an episode may take")
        m.set_defaults(func=cmd_train)


def _add_common(m: argparse.ArgumentParser) -> None:
    m.add_argument("--model", required=True,
                   help="a model folder (Hugging Face layout) or a registered model's name")  # fmt: skip
    m.add_argument("--data", required=True, type=Path, metavar="DIR",
                   help="a built data set (codesearch dataset build); its train split is used")  # fmt: skip
    m.add_argument("--out", required=True, type=Path, metavar="OUT",
                   help="the trained model's folder (must not exist)")  # fmt: skip
    m.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="auto: an accelerator when torch sees one, else the CPU")  # fmt: skip
    m.add_argument("--max-steps", type=int, default=0, metavar="N",
                   help="optimizer steps (0: --epochs over the rows)")  # fmt: skip
    m.add_argument("--epochs", type=float, default=1.0)
    m.add_argument("--lr", type=float, default=5e-5, help="learning rate (default 5e-5)")
    m.add_argument("--batch-size", type=int, default=4)
    m.add_argument("--grad-accum", type=int, default=1)
    m.add_argument("--max-length", type=int, default=0, metavar="N",
                   help="tokens a row may hold (0: the model's context, at most 4096)")  # fmt: skip
    m.add_argument("--limit", type=int, default=0, metavar="N",
                   help="at most N items or tasks of the split, in order (0: all)")  # fmt: skip
    m.add_argument("--seed", type=int, default=0)


def settings_from(args: argparse.Namespace) -> Any:
    from codesearch_core.train import Settings

    values: dict[str, Any] = {
        "epochs": args.epochs, "max_steps": args.max_steps, "learning_rate": args.lr,
        "batch_size": args.batch_size, "grad_accum": args.grad_accum,
        "max_length": args.max_length, "seed": args.seed,
    }  # fmt: skip
    for flag in ("k", "min_reward", "temperature", "max_new_tokens", "num_generations",
                 "max_completion_length", "max_turns"):  # fmt: skip
        if hasattr(args, flag):
            values[flag] = getattr(args, flag)
    return Settings(**values)


def cmd_train(args: argparse.Namespace) -> int:
    from codesearch_core.train import prepare, run_worker, torch_python, work_folder

    settings = settings_from(args)
    python = torch_python()  # no torch anywhere: say so before building any row
    opener = None
    if getattr(args, "episodes", False):
        from codesearch_core.cli.store_access import open_store

        def opener() -> Any:
            return open_store(args.db)

    elif getattr(args, "db", None) is not None:
        raise InputFileError("--db is the store of --episodes; give --episodes too")
    print(f"preparing {args.mode}: the train split of {args.data}…", file=sys.stderr)
    try:
        spec = prepare(args.mode, args.model, args.data, args.out, settings=settings,
                       device=args.device, sampler=getattr(args, "sampler", "hf"),
                       limit=args.limit, episodes=opener)  # fmt: skip
    except KeyboardInterrupt:
        import shutil

        shutil.rmtree(work_folder(args.out.resolve()), ignore_errors=True)
        raise
    rows = spec.rows
    what = (f"{rows['rows']} rows ({rows['items']} items, {rows['episodes']} episodes)"
            if "rows" in rows else f"{rows['tasks']} tasks")  # fmt: skip
    left = rows.get("left_out") or {}
    print(f"{what} from {args.data}" + (f"; left out: {left}" if left else ""), file=sys.stderr)
    return run_worker(Path(spec.work) / "spec.json", python)
