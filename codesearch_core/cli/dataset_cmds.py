"""Sub-commands of `dataset`: build a data set from a recipe, draw its QA sample (and import the
verdicts on it), print its card.

`codesearch dataset build RECIPE.toml --out DIR` runs the recipe's stages with one progress line
each; Ctrl-C stops at the next boundary (exit 130) and the same command again resumes from the
last finished stage. Exit 2 for a recipe that cannot be built (the message names its line).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from codesearch_core.cli.interrupts import stop_on_ctrl_c
from codesearch_core.cli.progress import Progress

if TYPE_CHECKING:
    from codesearch_core.dataset import BuildResult

EXIT_OK: Final = 0
EXIT_INTERRUPTED: Final = 130


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "dataset",
        help="build a data set from a recipe, sample it for QA, print its card",
        description="A data set declared once in a TOML recipe (docs/dataset.md): build it, draw "
        "a QA sample and import the verdicts on it, print its card.",
    )
    dsub = p.add_subparsers(dest="dataset_command", required=True, metavar="COMMAND")
    b = dsub.add_parser(
        "build",
        help="run a recipe: synthesize, verify, filter, split, export, card",
        description="Run the recipe's stages into DIR. Each stage's output is kept under "
        "DIR/.work, so an interrupted build resumes; the data files, exports and card are put in "
        "DIR only when complete. The same recipe on the same corpus pins gives the same bytes.",
    )
    b.add_argument("recipe", type=Path, help="the recipe (TOML)")
    b.add_argument("--out", type=Path, required=True, metavar="DIR", help="the data set's folder")
    b.add_argument("--json", action="store_true", help="print the card as JSON")
    b.set_defaults(func=cmd_build)
    s = dsub.add_parser(
        "sample",
        help="draw a stratified QA sample, or import the verdicts on it",
        description="Draw a stratified random sample of the data set in DIR into "
        "DIR/qa/sample.jsonl; with --import-verdicts, read {id, verdict} lines (correct or "
        "incorrect) on it and write the estimated share of correct items with its 95%% Wilson "
        "interval into the card, and the rejected ids into DIR/qa/rejected.txt.",
    )
    s.add_argument("dir", type=Path, metavar="DIR")
    s.add_argument("--n", type=int, default=100, help="items to sample (default 100)")
    s.add_argument("--stratify", default="tag,language", help="fields, comma-separated")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--import-verdicts", type=Path, metavar="FILE", help="JSONL of {id, verdict}")
    s.set_defaults(func=cmd_sample)
    c = dsub.add_parser("card", help="print a built data set's card")
    c.add_argument("dir", type=Path, metavar="DIR")
    c.add_argument("--json", action="store_true", help="card.json instead of the README")
    c.set_defaults(func=cmd_card)


def cmd_build(args: argparse.Namespace) -> int:
    from codesearch_core.dataset import STAGES, BuildInterrupted, Hooks, build_dataset, load_recipe

    recipe = load_recipe(args.recipe)
    bars: dict[str, Progress] = {}

    def on_stage(stage: str, resumed: bool) -> None:
        for bar in bars.values():
            bar.close()
        n = STAGES.index(stage) + 1
        if resumed:
            print(f"[{n}/{len(STAGES)}] {stage}: done by an earlier run", file=sys.stderr)
        else:
            bars[stage] = Progress(f"[{n}/{len(STAGES)}] {stage}", unit="items")

    def on_progress(stage: str, done: int, total: int | None) -> None:
        if stage in bars:
            bars[stage].update(done, total=total)

    try:
        with stop_on_ctrl_c("the stage in flight") as ctrl_c:
            result = build_dataset(recipe, args.out, Hooks(on_stage, on_progress, ctrl_c.is_set))
    except BuildInterrupted as stop:
        print(f"interrupted during {stop.stage}: the stages finished before it are kept in "
              f"{args.out}/.work; run the same command again to go on", file=sys.stderr)  # fmt: skip
        return EXIT_INTERRUPTED
    finally:
        for bar in bars.values():
            bar.close()
    _print(result, as_json=args.json)
    return EXIT_OK


def _print(result: BuildResult, *, as_json: bool) -> None:
    card = result.card
    if as_json:
        print(json.dumps(card, sort_keys=True, ensure_ascii=False))
        return
    splits = ", ".join(f"{k} {v['items']}" for k, v in card["splits"].items())
    print(f"{card['name']}: {card['stages']['kept']} items ({splits}) from "
          f"{len(card['corpora'])} corpora → {result.out}")  # fmt: skip
    print(
        "dropped: " + (", ".join(f"{k} {v}" for k, v in card["stages"]["dropped"].items()) or "-")
    )
    if result.resumed:
        print(f"resumed: {', '.join(result.resumed)} done by an earlier run")


def cmd_sample(args: argparse.Namespace) -> int:
    from codesearch_core.dataset import draw_sample, import_verdicts

    if args.import_verdicts is not None:
        qa = import_verdicts(args.dir, args.import_verdicts)
        o = qa["overall"]
        print(f"{o['correct']} of {o['reviewed']} reviewed items correct: {o['share']:.1%} "
              f"(95% Wilson interval {o['low']:.1%} to {o['high']:.1%}); card updated, rejected "
              f"ids in {args.dir / 'qa' / 'rejected.txt'}")  # fmt: skip
        return EXIT_OK
    fields = [f.strip() for f in args.stratify.split(",") if f.strip()]
    sample = draw_sample(args.dir, args.n, fields, args.seed)
    strata = len({s["stratum"] for s in sample})
    print(f"sampled {len(sample)} items in {strata} strata → {args.dir / 'qa' / 'sample.jsonl'}")
    return EXIT_OK


def cmd_card(args: argparse.Namespace) -> int:
    from codesearch_core.dataset import render_card

    text = render_card(args.dir)  # a folder without a card is refused here, with the fix
    if args.json:
        text = (args.dir / "card.json").read_text(encoding="utf-8")
    print(text, end="")
    return EXIT_OK
