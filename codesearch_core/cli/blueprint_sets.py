"""The blueprint set a command works on: `--blueprints SOURCE`, then `--tag` and `--split`
(shared by `eval`, `eval --agent` and `gym`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from codesearch_core.errors import InputFileError


def select_blueprints(
    args: argparse.Namespace, seeds: Callable[[], list[Any]] | None = None
) -> tuple[list[Any], str]:
    """The set and its label: SOURCE, then --tag and --split. `seeds` loads what 'seeds' names
    (default: the first seed file, the single-call eval's set)."""
    from codesearch_core.cli.propose_cmds import load_blueprints

    source: str = args.blueprints
    tag, split = args.tag, args.split
    if source.startswith("tag:"):
        source, tag = "seeds", source[4:]
    elif source.startswith("split:"):
        source, split = "store", source[6:]
        if split not in ("train", "eval"):
            raise InputFileError(f"{args.blueprints!r}: the split is train or eval")
    blueprints = seeds() if source == "seeds" and seeds else load_blueprints(source, args.db)
    if tag:
        blueprints = [bp for bp in blueprints if tag in bp.tags]
    if split:
        blueprints = [bp for bp in blueprints if bp.split.value == split]
    label = source + "".join(f" {k}:{v}" for k, v in (("tag", tag), ("split", split)) if v)
    if not blueprints:
        raise InputFileError(f"nothing to evaluate: no blueprint in {label}")
    return blueprints, label
