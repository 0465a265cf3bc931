"""Sub-command: eval. Runs an engine on a blueprint set, executes and grades every answer, stores
the eval run in the store (`export.evaluation`, `store.evals`) and prints its summary, overall and
per tag and language.

Every engine `codesearch propose` has works here, with the same flags: `mutations` needs no model
(its wrong calls make a floor to beat); `openai` asks any OpenAI-compatible server (checked first:
a server that is down or does not serve `--model` is an error before anything runs); `vllm` runs
the model in this process (an engine that cannot start is an error with its own last line);
`import --from F` scores answers written elsewhere to a proposals JSONL file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codesearch_core.errors import InputFileError

if TYPE_CHECKING:
    from codesearch_core.store import EvalRun

EXIT_OK = 0
ENGINES = ("mutations", "openai", "vllm", "import", "reference")


def register(sub: argparse._SubParsersAction[Any]) -> None:
    from codesearch_core.cli.gym_cmds import add_agent_arguments
    from codesearch_core.cli.propose_cmds import add_engine_arguments, seed_sets_help

    p = sub.add_parser(
        "eval",
        help="score an engine on a blueprint set: every answer run and graded, stored as a run",
        description=(
            "Ask ENGINE for K answers per blueprint, execute and grade each, store the eval run "
            "(the Evaluations page lists runs) and print the summary: mean reward, span F1, "
            "tool-choice accuracy, PCRE2-rule violations, parse and repair rates, pass@k; "
            "overall, per tag and per language."
        ),
    )
    p.add_argument("--engine", choices=ENGINES, help="where the answers come from")
    p.add_argument(
        "--from",
        "--file",
        dest="from_file",
        type=Path,
        metavar="FILE",
        help="the answers JSONL (--engine import)",
    )
    p.add_argument(
        "--blueprints",
        default="seeds",
        metavar="SOURCE",
        help=f"{seed_sets_help()}; the same set with or without --agent (without, its plans are "
        "left out: one call cannot answer them); 'store', a blueprints JSONL file, tag:NAME (the "
        "seeds with a tag) or split:eval (the store's held-out blueprints)",
    )
    p.add_argument("--tag", help="only blueprints with this tag (of any SOURCE)")
    p.add_argument("--split", choices=("train", "eval"), help="only blueprints of this split")
    p.add_argument("--n", type=int, default=1, metavar="K", help="answers per blueprint")
    p.add_argument("--db", type=Path, default=None, metavar="PATH", help="the store")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument(
        "--import-json",
        type=Path,
        metavar="DIR",
        help="instead of a run: store the runs an earlier version saved as JSON files in DIR",
    )
    p.add_argument(
        "--delete", metavar="RUN_ID", help="instead of a run: delete a stored run (a lead's call)"
    )
    p.add_argument("--list", action="store_true", help="instead of a run: list the stored runs")
    add_engine_arguments(p)
    add_agent_arguments(p)
    p.set_defaults(func=cmd_eval, skip_bad=False)


def cmd_eval(args: argparse.Namespace) -> int:
    from codesearch_core.cli.eval_sources import check_server, select_blueprints, store_and_print
    from codesearch_core.cli.propose_cmds import engine_interrupts
    from codesearch_core.cli.store_access import open_store
    from codesearch_core.corpora import check_search_environment
    from codesearch_core.engines import MAX_N
    from codesearch_core.export import import_json_runs

    if args.delete is not None or args.list:
        return _manage(args)
    if args.agent:
        from codesearch_core.cli.gym_cmds import cmd_agent_eval
        from codesearch_core.cli.propose_cmds import engine_interrupts

        with engine_interrupts(args.engine or ""):  # vLLM: the engine's stop path, load included
            return cmd_agent_eval(args)
    if args.import_json is not None:
        with open_store(args.db) as store:
            report = import_json_runs(store, args.import_json)
        print(
            f"{len(report.imported)} run(s) imported from {args.import_json}, "
            f"{len(report.already)} already stored"
        )
        for name in report.unreadable:
            print(f"not an eval run: {name}", file=sys.stderr)
        return EXIT_OK
    if args.engine is None:
        raise InputFileError("give --engine (mutations, openai, vllm or import)")
    if args.engine == "reference":
        raise InputFileError("--engine reference plays episodes: add --agent")
    if not 1 <= args.n <= MAX_N:
        raise InputFileError(f"--n must be 1 to {MAX_N} (answers per blueprint), got {args.n}")
    if args.engine == "import" and args.from_file is None:
        raise InputFileError("--engine import needs --from FILE (the answers JSONL)")
    blueprints, label = select_blueprints(args)
    # Before a model is loaded (a minute for vLLM): without the tools or a corpus every answer
    # would fail alike, and that run would be stored as the model's score.
    check_search_environment(bp.corpus for bp in blueprints if bp.plan is None)
    if args.engine == "openai":
        check_server(args)
    try:
        with engine_interrupts(args.engine):
            run = _evaluate(args, blueprints, label)
    except KeyboardInterrupt:
        print("interrupted: nothing stored (an eval run is stored whole, once graded)",
              file=sys.stderr)  # fmt: skip
        raise
    store_and_print(args, run, "eval run", None, ("mean_reward", "pass_at_k"))
    return EXIT_OK


def _evaluate(args: argparse.Namespace, blueprints: list[Any], label: str) -> EvalRun:
    """The engine asked, its answers run and graded; a vLLM engine is shut down however it ends."""
    from codesearch_core.cli.propose_cmds import build_engine, sampling_settings
    from codesearch_core.engines import PromptConfig
    from codesearch_core.export import evaluate, left_out

    try:
        engine = build_engine(args)
        for notice in getattr(engine, "notices", ()):
            print(f"note: {notice}", file=sys.stderr)
        # A model's answers can take minutes: say what is being asked (stderr: --json stays clean),
        # and what is not: the set's count would otherwise not match the blueprints asked.
        for kind, what in left_out(blueprints).items():
            print(f"{what['blueprints']} {kind} blueprint(s) left out: {what['reason']}",
                  file=sys.stderr)  # fmt: skip
        single = sum(bp.plan is None for bp in blueprints)
        print(f"asking {engine.name}:{engine.model} for {args.n} answer(s) to each of {single} "
              f"blueprint(s) of {label}, then running and grading them…", file=sys.stderr)  # fmt: skip
        run = evaluate(
            engine,
            blueprints,
            n=args.n,
            label=label,
            settings=sampling_settings(args),
            prompt=PromptConfig(schema=args.prompt_schema),
        )
    finally:
        if args.engine == "vllm":
            from codesearch_core.engines import shutdown_vllm_engine

            shutdown_vllm_engine()
    return run


def _manage(args: argparse.Namespace) -> int:
    from codesearch_core.cli.store_access import open_store

    with open_store(args.db) as store:
        if args.delete is not None:
            if not store.evals.delete(args.delete):
                raise InputFileError(f"no eval run {args.delete!r} in the store")
            print(f"deleted eval run {args.delete}")
            return EXIT_OK
        runs = store.evals.list()
    for run in runs:
        overall = run.summary.get("overall", {})
        reward, passed = overall.get("mean_reward"), overall.get("pass_at_k")
        print(
            f"{run.run_id}\t{run.label}\tmean reward "
            f"{'-' if reward is None else f'{reward:.3f}'}\tpass@k "
            f"{'-' if passed is None else f'{passed:.2f}'}"
        )
    if not runs:
        print("no eval runs stored yet")
    return EXIT_OK
