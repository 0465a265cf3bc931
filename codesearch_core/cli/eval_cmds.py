"""Sub-command: eval. Runs an engine on a blueprint set, executes and grades every answer, saves
the eval run (`export.evaluation`) and prints its summary, overall and per tag and language.

`--engine mutations` needs no model (its wrong calls make a floor to beat); `--engine import
--file F` scores any model's answers written to a proposals JSONL file (what `codesearch propose
--out` writes, or a model's output in that layout).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from codesearch_core.errors import InputFileError

EXIT_OK = 0


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "eval",
        help="score an engine on a blueprint set: every answer run and graded, saved as a run",
        description=(
            "Ask ENGINE for K answers per blueprint, execute and grade each, save the eval run "
            "(the Evaluations page lists runs) and print the summary: mean reward, span F1, "
            "tool-choice accuracy, PCRE2-rule violations, parse and repair rates, pass@k; "
            "overall, per tag and per language."
        ),
    )
    p.add_argument("--engine", required=True, choices=("mutations", "import"))
    p.add_argument("--file", type=Path, help="the answers JSONL (--engine import)")
    p.add_argument(
        "--blueprints",
        default="seeds",
        help="'seeds' (default), 'store', a blueprints JSONL file, or tag:NAME (seeds with a tag)",
    )
    p.add_argument("--n", type=int, default=1, metavar="K", help="answers per blueprint")
    p.add_argument(
        "--db", type=Path, default=None, metavar="PATH", help="the store (--blueprints store)"
    )
    p.add_argument("--out-dir", type=Path, default=None, help="where runs are saved")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=cmd_eval)


def cmd_eval(args: argparse.Namespace) -> int:
    from codesearch_core.cli.propose_cmds import load_blueprints
    from codesearch_core.engines import Engine, ImportEngine, MutationEngine
    from codesearch_core.export import evaluate, save_run

    source: str = args.blueprints
    if source.startswith("tag:"):
        tag = source[4:]
        blueprints = [bp for bp in load_blueprints("seeds") if tag in bp.tags]
    else:
        blueprints = load_blueprints(source, args.db)
    if args.n < 1:
        raise InputFileError("--n must be at least 1")
    engine: Engine
    if args.engine == "import":
        if args.file is None:
            raise InputFileError("--engine import needs --file (the answers JSONL)")
        engine = ImportEngine(args.file)
    else:
        engine = MutationEngine()
    run = evaluate(engine, blueprints, n=args.n, label=source)
    path = save_run(run, args.out_dir)
    if args.json:
        print(json.dumps({"run_id": run.run_id, "path": str(path), **run.summary}, indent=2))
        return EXIT_OK
    overall = run.summary["overall"]
    print(f"eval run {run.run_id} ({run.engine}:{run.model}, n={run.n}) saved to {path}")
    for key, value in overall.items():
        print(f"  {key:<18} {value if not isinstance(value, float) else round(value, 3)}")
    print("by tag (mean reward, pass@k):")
    for tag, s in run.summary["by_tag"].items():
        print(f"  {tag:<24} {s['mean_reward'] or 0:.3f}  {s['pass_at_k'] or 0:.2f}")
    return EXIT_OK
