"""Sub-commands of `dataset`: build a data set from a recipe, draw its QA sample (into the studio's
QA queue, and import verdicts on it), print its card with the measured error rate.

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
    from codesearch_core.store import Store

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
        "DIR/qa/sample.jsonl; with --queue, also into the store's QA queue (the Review page), "
        "where reviewers accept (correct) or reject (incorrect) each item. With "
        "--import-verdicts, read {id, verdict} lines (correct or incorrect) on it; then, with "
        "the QA queue's settled decisions, write the estimated share of correct items with its "
        "95%% Wilson interval into the card, and the rejected ids into DIR/qa/rejected.txt.",
    )
    s.add_argument("dir", type=Path, metavar="DIR")
    s.add_argument("--n", type=int, default=100, help="items to sample (default 100)")
    s.add_argument("--stratify", default="source,rule",
                   help="fields, comma-separated (default source,rule); draws are in proportion "
                   "to each stratum's size, and the card weights each by its share")  # fmt: skip
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--queue", action="store_true",
                   help="also queue the sample for review in the studio (QA queue); sampling "
                   "again replaces its open, undecided items and keeps the decided ones")  # fmt: skip
    s.add_argument("--import-verdicts", type=Path, metavar="FILE", help="JSONL of {id, verdict}")
    s.add_argument("--db", type=Path, default=None, metavar="PATH", help="the store (QA queue)")
    s.set_defaults(func=cmd_sample)
    c = dsub.add_parser(
        "card",
        help="print a built data set's card, with the QA queue's verdicts",
        description="Print the card of the data set in DIR. When the store holds a QA queue of "
        "it, its settled decisions (with any imported verdicts) are written into the card first: "
        "the estimated share of correct items, overall and per stratum, and DIR/qa/rejected.txt.",
    )
    c.add_argument("dir", type=Path, metavar="DIR")
    c.add_argument("--json", action="store_true", help="card.json instead of the README")
    c.add_argument("--db", type=Path, default=None, metavar="PATH", help="the store (QA queue)")
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


def _queue_store(db: Path | None) -> Store | None:
    """The store that holds the QA queue; None when there is no store file (a card is printed
    on a machine without the studio, and nothing creates a store just to find it empty)."""
    from codesearch_core import config
    from codesearch_core.cli.store_access import open_store

    path = db if db is not None else config.db_path()
    return open_store(path) if path.is_file() else None


def _said(qa: dict[str, Any]) -> str:
    o = qa["overall"]
    return (f"{o['correct']} of {o['reviewed']} reviewed items correct; estimated wrong in the "
            f"data set {1 - o['share']:.1%} (95% interval {1 - o['high']:.1%} to "
            f"{1 - o['low']:.1%}; {qa.get('weighting', 'unweighted')})")  # fmt: skip


def cmd_sample(args: argparse.Namespace) -> int:
    from codesearch_core.cli.store_access import open_store
    from codesearch_core.dataset import dataset_of, draw_sample, import_verdicts, queue_sample

    if args.import_verdicts is not None:
        store = _queue_store(args.db)
        try:
            qa = import_verdicts(args.dir, args.import_verdicts, store)
        finally:
            if store is not None:
                store.close()
        print(f"{_said(qa)}; card updated, rejected ids in {args.dir / 'qa' / 'rejected.txt'}")
        return EXIT_OK
    fields = [f.strip() for f in args.stratify.split(",") if f.strip()]
    if args.queue:
        dataset_of(args.dir)  # a folder that cannot be queued is refused before anything is written
    sample = draw_sample(args.dir, args.n, fields, args.seed)
    strata = len({s["stratum"] for s in sample})
    print(f"sampled {len(sample)} items in {strata} strata → {args.dir / 'qa' / 'sample.jsonl'}")
    if args.queue:
        with open_store(args.db) as store:
            done = queue_sample(args.dir, sample, store)
            where = store.path
        print(f"QA queue ({where}): {done.added} new, {done.unchanged} already queued, "
              f"{done.removed} open ones left out of this sample removed, {done.kept} with "
              "decisions kept; review them on the Review page (queue QA)")  # fmt: skip
    return EXIT_OK


def cmd_card(args: argparse.Namespace) -> int:
    from codesearch_core.dataset import render_card, write_estimate

    text = render_card(args.dir)  # a folder without a card is refused here, with the fix
    store = _queue_store(args.db)
    if store is not None:
        with store:
            if write_estimate(args.dir, store) is not None:
                text = render_card(args.dir)
    if args.json:
        text = (args.dir / "card.json").read_text(encoding="utf-8")
    print(text, end="")
    return EXIT_OK
