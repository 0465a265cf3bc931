"""Sub-command of `db`: `split`, which puts blueprints on either side of the held-out line.

`codesearch db split eval ID... [--tag TAG]` marks blueprints `split: eval`: every export leaves
them out (and counts them in its manifest) unless `--include-eval`, and `codesearch eval
--blueprints split:eval` scores a model on them. `split train` puts them back.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from codesearch_core.cli.store_access import open_store
from codesearch_core.errors import InputFileError

EXIT_OK = 0


def register_db(
    db_sub: argparse._SubParsersAction[Any], db_option: Callable[[argparse.ArgumentParser], None]
) -> None:
    p = db_sub.add_parser(
        "split",
        help="hold blueprints out for evaluation (eval) or put them back (train)",
        description="Mark stored blueprints split: eval (held out of every export unless "
        "--include-eval; `codesearch eval --blueprints split:eval` scores them) or train. Each "
        "change is a blueprint edit: a new revision, in the audit trail.",
    )
    db_option(p)
    p.add_argument("split", choices=("eval", "train"))
    p.add_argument("ids", nargs="*", metavar="ID", help="blueprint ids")
    p.add_argument("--tag", help="every stored blueprint with this tag")
    p.set_defaults(func=cmd_db_split)


def cmd_db_split(args: argparse.Namespace) -> int:
    from codesearch_core.store import BlueprintFilters

    if not args.ids and not args.tag:
        raise InputFileError("name the blueprints: ids, or --tag TAG")
    with open_store(getattr(args, "db", None)) as store:
        ids = list(args.ids)
        if args.tag:
            page = store.blueprints.list(BlueprintFilters(tag=args.tag), limit=1_000_000)
            if not page.items:
                raise InputFileError(f"no stored blueprint has the tag {args.tag!r}")
            ids += [bp.id for bp in page.items]
        changed = store.blueprints.set_split(ids, args.split)
        held = store.blueprints.list(BlueprintFilters(split="eval"), limit=0).total
    unique = len(dict.fromkeys(ids))
    print(
        f"{changed} of {unique} blueprint(s) moved to {args.split} "
        f"({unique - changed} already there); {held} held out for evaluation in all"
    )
    return EXIT_OK
