"""The `codesearch` command. Each sub-module registers its own sub-commands.

Every command returns an exit code: 0 success, 1 the work ran but found problems (a seed that does
not reproduce, a call that failed), 2 bad input or set-up (the message says which and why).

Starting is kept cheap (`codesearch --help` <= 0.3 s, `codesearch run` <= 0.5 s): `COMMANDS` names
each command, its one-line help and the module that registers it, so the top-level parser lists
every command without importing any of those modules, and `main` imports only the module of the
command named on the command line. `tests/cli/test_cli_startup.py` holds the modules importing this
package may load, and checks `COMMANDS` against what the modules register.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Iterable, Sequence
from typing import Final, NamedTuple

from codesearch_core.errors import CodesearchError

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_BAD_INPUT = 2


class Command(NamedTuple):
    """One top-level command: its name, the help `codesearch --help` shows, and the module of
    `codesearch_core.cli` whose `register(sub)` adds its full parser (a module may add several
    commands: they sit next to each other here, in the order it adds them)."""

    name: str
    help: str
    module: str


COMMANDS: Final = (
    Command("run", "execute one tool call (or a plan) with the real rg / ast-grep", "tool_cmds"),
    Command(
        "grade",
        "run a call on a blueprint's corpus and grade it against the expected spans",
        "tool_cmds",
    ),
    Command("corpus", "the corpora: add, list, check, pin", "corpus_cmds"),
    Command("model", "models as pinned inputs: add, list", "model_cmds"),
    Command("seeds", "the seed blueprints: the verified core", "seeds_cmds"),
    Command("db", "create, fill and inspect the curation store", "data_cmds"),
    Command(
        "export",
        "write curated items as training data, one JSONL layout per trainer",
        "data_cmds",
    ),
    Command(
        "guidelines", "the annotation guidelines reviewers see on every card", "guidelines_cmds"
    ),
    Command(
        "propose",
        "ask an engine for tool calls for blueprints; write them to the store or JSONL",
        "propose_cmds",
    ),
    Command(
        "verify",
        "execute and grade every pending proposal in the store, in parallel",
        "verify_cmds",
    ),
    Command(
        "synthesize",
        "make draft blueprints from a corpus: mine, verify, de-duplicate, write intents",
        "synth_cmds",
    ),
    Command(
        "dataset",
        "build a data set from a recipe, sample it for QA, print its card",
        "dataset_cmds",
    ),
    Command(
        "eval",
        "score an engine on a blueprint set: every answer run and graded, stored as a run",
        "eval_cmds",
    ),
    Command(
        "gym",
        "the gym: code-search tasks as multi-turn episodes for agents and RL trainers",
        "gym_cmds",
    ),
    Command(
        "mcp",
        "serve a gym task or a corpus to agent harnesses over MCP (stdio or streamable HTTP)",
        "mcp_cmds",
    ),
    Command(
        "review",
        "label or correct steps of stored episodes; a lead's bulk accept or reject",
        "review_cmds",
    ),
    Command(
        "rollouts",
        "sample agent episodes in the gym and keep the good ones in the store",
        "rollout_cmds",
    ),
    Command(
        "train",
        "fine-tune a model on a data set: sft, rft or grpo (TRL, in the torch venv)",
        "train_cmds",
    ),
    Command(
        "serve-model",
        "start vLLM's OpenAI-compatible server with this machine's defaults",
        "serve_cmds",
    ),
)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The `codesearch` parser. Without `argv`, every command's module is imported and registers
    its whole parser; with it, only the module of the command `argv` names is, and the other
    commands are listed (name and help, from `COMMANDS`) without their modules being imported."""
    parser = argparse.ArgumentParser(
        prog="codesearch",
        description="Author, execute, grade and export verified code-search tool calls.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    wanted = {c.module for c in COMMANDS} if argv is None else _modules_named(argv)
    registered: set[str] = set()
    for command in COMMANDS:
        if command.module in registered:
            continue
        if command.module in wanted:
            module = importlib.import_module(f"{__name__}.{command.module}")
            module.register(sub)
            registered.add(command.module)
        else:
            # A stand-in: `codesearch --help` lists it; `main` never parses with it, since the
            # command named on the command line always gets its module's parser.
            sub.add_parser(command.name, help=command.help, add_help=False)
    return parser


def _modules_named(argv: Iterable[str]) -> set[str]:
    """The module of the command `argv` names: its first word that is not an option (the
    top-level parser has no option but `-h`); none for `codesearch --help` or a bad name."""
    for word in argv:
        if not word.startswith("-"):
            return {c.module for c in COMMANDS if c.name == word}
    return set()


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words)
    args = parser.parse_args(words)
    try:
        code: int = args.func(args)
    except CodesearchError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt as err:
        print("interrupted", file=sys.stderr)
        # 143 when an engine's stop path took a SIGTERM (`engines.Stopped`), else Ctrl-C's 130
        return int(getattr(err, "exit_code", 130))
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
