"""The `codesearch` command. Each sub-module registers its own sub-commands.

Every command returns an exit code: 0 success, 1 the work ran but found problems (a seed that does
not reproduce, a call that failed), 2 bad input or set-up (the message says which and why).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from codesearch_core.cli import (
    corpus_cmds,
    data_cmds,
    dataset_cmds,
    eval_cmds,
    guidelines_cmds,
    gym_cmds,
    propose_cmds,
    rollout_cmds,
    seeds_cmds,
    serve_cmds,
    synth_cmds,
    tool_cmds,
    verify_cmds,
)
from codesearch_core.errors import CodesearchError

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_BAD_INPUT = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codesearch",
        description="Author, execute, grade and export verified code-search tool calls.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (
        tool_cmds,
        corpus_cmds,
        seeds_cmds,
        data_cmds,
        guidelines_cmds,
        propose_cmds,
        verify_cmds,
        synth_cmds,
        dataset_cmds,
        eval_cmds,
        gym_cmds,
        rollout_cmds,
        serve_cmds,
    ):
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except CodesearchError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`codesearch grade ... --json | head`): stop quietly with 0, as rg
        # does, not with a traceback. stdout is pointed at /dev/null so the flush at exit does not
        # raise the same error again (the recipe of Python's `signal` documentation).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return code


if __name__ == "__main__":
    raise SystemExit(main())
