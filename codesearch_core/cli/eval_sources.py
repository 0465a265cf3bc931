"""What `codesearch eval` runs on and against, shared by the single-call eval (`eval_cmds`) and
the agent eval (`gym_cmds`): the blueprint set the flags select, and the check that an
OpenAI-compatible server is up and serves the model. A module of its own so that neither command
module imports the other (eval_cmds hands `--agent` to gym_cmds).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from codesearch_core.errors import EngineError, InputFileError


def select_blueprints(args: argparse.Namespace) -> tuple[list[Any], str]:
    """The set and its label: SOURCE, then --tag and --split. A seed set means the same for the
    single-call eval and the agent's (`corpora.seed_sets`); tag:NAME is the `seeds` with a tag."""
    from codesearch_core.cli.propose_cmds import load_blueprints

    source: str = args.blueprints
    tag, split = args.tag, args.split
    if source.startswith("tag:"):
        source, tag = "seeds", source[4:]
    elif source.startswith("split:"):
        source, split = "store", source[6:]
        if split not in ("train", "eval"):
            raise InputFileError(f"{args.blueprints!r}: the split is train or eval")
    blueprints = load_blueprints(source, args.db)
    if tag:
        blueprints = [bp for bp in blueprints if tag in bp.tags]
    if split:
        blueprints = [bp for bp in blueprints if bp.split.value == split]
    label = source + "".join(f" {k}:{v}" for k, v in (("tag", tag), ("split", split)) if v)
    if not blueprints:
        raise InputFileError(f"nothing to evaluate: no blueprint in {label}")
    return blueprints, label


def check_server(args: argparse.Namespace) -> None:
    """An OpenAI-compatible server is asked what it serves before the run: one that is down,
    refuses the key or does not serve the model fails here, in a second, with what to do."""
    import os

    from codesearch_core.cli.propose_cmds import model_name
    from codesearch_core.studio import probe_openai_server

    if not args.base_url:
        raise EngineError("--engine openai needs --base-url, e.g. http://127.0.0.1:8000/v1")
    model = model_name(args)
    for url in args.base_url:
        served = probe_openai_server(url, args.api_key or os.environ.get("OPENAI_API_KEY"))
        if served and model not in served:
            raise EngineError(
                f"{url} serves {', '.join(served[:5])}, not {model!r}: give --model one of them"
            )


def store_and_print(
    args: argparse.Namespace,
    run: Any,
    what: str,
    keys: Sequence[str] | None,
    by_tag: tuple[str, str],
) -> None:
    """Store an eval run and print its summary: the JSON document with `--json` (nothing else on
    stdout), else `what` and its id, the overall `keys` (every key when None) and per tag the two
    metrics `by_tag` names."""
    from codesearch_core.cli.store_access import open_store

    with open_store(args.db) as store:
        store.evals.save(run)
    if args.json:
        print(json.dumps({"run_id": run.run_id, **run.summary}, indent=2))
        return
    overall = run.summary["overall"]
    print(f"{what} {run.run_id} ({run.engine}:{run.model}, n={run.n}, {run.blueprints}) stored")
    for key in keys if keys is not None else list(overall):
        value = overall.get(key)
        print(f"  {key:<18} {value if not isinstance(value, float) else round(value, 3)}")
    first, second = by_tag
    print(f"by tag ({first.replace('_', ' ')}, {second.replace('_', ' ')}):")
    for tag, m in run.summary["by_tag"].items():
        print(f"  {tag:<34} {m[first] or 0:.3f}  {m[second] or 0:.3f}")
