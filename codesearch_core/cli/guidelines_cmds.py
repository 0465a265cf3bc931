"""`guidelines show` and `guidelines set FILE --by NAME`: the project's annotation guidelines
(Markdown, versioned in the store, shown folded on every review card; issue 29).

Like every command, it acts as the person running it (mode `cli`); `--by` names the lead the new
version is credited to, as the studio's Overview page does for the person logged in.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from codesearch_core.access import Actor, Mode, check_name
from codesearch_core.cli.store_access import open_store
from codesearch_core.errors import CodesearchError

EXIT_OK = 0


def register(sub: argparse._SubParsersAction[Any]) -> None:
    guide = sub.add_parser(
        "guidelines",
        help="the annotation guidelines reviewers see on every card",
        description="Show or save the project's annotation guidelines (Markdown). Every save is "
        "a new version; each decision keeps the version in force when it was made.",
    )
    guide_sub = guide.add_subparsers(dest="guidelines_command", required=True, metavar="ACTION")
    show = guide_sub.add_parser("show", help="print the guidelines in force (or --version N)")
    show.add_argument("--db", type=Path, default=None, help="the store file")
    show.add_argument("--version", type=int, default=None, help="a saved version instead")
    show.set_defaults(func=cmd_guidelines_show)
    save = guide_sub.add_parser(
        "set",
        help="save a Markdown file as the next version",
        description="Save FILE as the next version of the guidelines (a lead's action). The same "
        "text as the version in force saves nothing.",
    )
    save.add_argument("--db", type=Path, default=None, help="the store file")
    save.add_argument("file", type=Path, metavar="FILE", help="a Markdown file ('-' for stdin)")
    save.add_argument("--by", default="", metavar="NAME", help="the lead it is saved as")
    save.set_defaults(func=cmd_guidelines_set)


def cmd_guidelines_show(args: argparse.Namespace) -> int:
    with open_store(args.db) as store:
        shown = store.guidelines.get(args.version)
    if shown is None:
        if args.version is not None:
            raise CodesearchError(f"there is no version {args.version} of the guidelines")
        print("no guidelines yet: `codesearch guidelines set FILE --by NAME` writes them")
        return EXIT_OK
    print(f"Guidelines v{shown.version} · {shown.author} · {shown.saved_at:%Y-%m-%d %H:%M} UTC\n")
    print(shown.text, end="")
    return EXIT_OK


def _read(path: Path) -> str:
    if str(path) == "-":
        return sys.stdin.read()
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CodesearchError(f"{path} is not UTF-8 text: guidelines are Markdown") from None
    except OSError as err:
        raise CodesearchError(f"cannot read {path}: {err.strerror or err}") from None


def cmd_guidelines_set(args: argparse.Namespace) -> int:
    text = _read(args.file)  # read before the store opens: a bad file leaves the store be
    with open_store(args.db) as opened:
        store = opened.acting_as(Actor(check_name(args.by), Mode.CLI)) if args.by else opened
        saved = store.guidelines.save(text)
    if saved is None:
        print("unchanged: that is the version in force already")
    else:
        print(f"saved guidelines v{saved.version} by {saved.author}")
    return EXIT_OK
