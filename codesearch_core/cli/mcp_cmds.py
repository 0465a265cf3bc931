"""`codesearch mcp`: a gym task, or a pinned corpus, as an MCP server for agent harnesses (Claude
Code, Codex, verifiers' MCP tools): `gym.mcp_server`, over stdio (the default: the harness starts
it) or streamable HTTP.

`--task ID` serves one task of a task set (`--blueprints` and the filters as `gym serve` takes
them): the search tools, `read_file` and `submit`, each call one turn of an episode, rewarded at
the submit. `--corpus NAME` serves the search tools and `read_file` on a corpus: no task, no
reward. Nothing but the protocol is written to stdout (stdio is the protocol's channel); what the
server says goes to stderr.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from codesearch_core.cli.gym_cmds import (
    add_beta_argument,
    add_task_set_arguments,
    agent_tasks,
    server_settings_from,
)
from codesearch_core.errors import InputFileError

#: `gym.mcp_server`'s defaults, named here so that building the parser does not import the SDK; a
#: test checks they are the same.
DEFAULT_MAX_TURNS = 16
DEFAULT_MAX_IN_FLIGHT = 8
DEFAULT_RATE = 50.0


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve a gym task or a corpus to agent harnesses over MCP (stdio or streamable HTTP)",
        description="An MCP server (the official SDK) over the gym's tools. --task ID: "
        "ripgrep_search, ast_grep_search, read_file and submit on one task, each call one turn "
        "of an episode, the submit answering its reward. --corpus NAME: the search tools and "
        "read_file on a corpus, no task. stdio by default (the harness starts it: `claude mcp "
        "add codesearch -- uv run codesearch mcp --task ID`); --transport http listens on "
        "127.0.0.1 unless given --host and a token (docs/gym_mcp.md).",
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--task", metavar="ID", help="the blueprint id of the task to serve")
    what.add_argument("--corpus", metavar="NAME", help="a corpus to explore: no task, no reward")
    add_task_set_arguments(p)
    p.add_argument("--max-turns", type=int, default=DEFAULT_MAX_TURNS, metavar="T",
                   help=f"calls per episode, submit included: each call is a turn (default "
                   f"{DEFAULT_MAX_TURNS})")  # fmt: skip
    add_beta_argument(p)
    p.add_argument("--max-in-flight", type=int, default=DEFAULT_MAX_IN_FLIGHT, metavar="N",
                   help=f"calls run at once, over all sessions; more are refused, not queued "
                   f"(default {DEFAULT_MAX_IN_FLIGHT})")  # fmt: skip
    p.add_argument("--rate", type=float, default=DEFAULT_RATE, metavar="R",
                   help=f"calls started a second; more are refused (default {DEFAULT_RATE:g})")  # fmt: skip
    h = p.add_argument_group("streamable HTTP (--transport http)")
    h.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                   help="stdio (default: the harness starts the server) or streamable HTTP")  # fmt: skip
    h.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; any other needs a token)")  # fmt: skip
    h.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    h.add_argument("--token", default=None,
                   help="require 'Authorization: Bearer TOKEN' on every request (default: the "
                   "environment variable CODESEARCH_GYM_TOKEN, which ps does not show)")  # fmt: skip
    p.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    """`codesearch mcp`: serve until the client goes (stdio) or Ctrl-C / SIGTERM (HTTP)."""
    from codesearch_core.gym import GymSettings, mcp_adapter

    listen = server_settings_from(args)
    adapter = mcp_adapter()
    try:
        # A call is a turn: an MCP harness sends its calls one at a time.
        settings = GymSettings(max_turns=args.max_turns, max_parallel=1, beta=args.beta)
        limits = adapter.CallLimits(args.max_in_flight, args.rate)
    except ValueError as err:
        raise InputFileError(str(err)) from None
    if args.corpus is not None:
        from codesearch_core.corpora import check_search_environment, corpus_root

        check_search_environment([args.corpus])
        gym = adapter.McpGym.for_corpus(args.corpus, corpus_root(args.corpus), settings, limits)
    else:
        tasks, label = agent_tasks(args)
        task = next((t for t in tasks.tasks if t.blueprint.id == args.task), None)
        if task is None:
            raise InputFileError(
                f"no task {args.task!r} in {label} (its corpus may be missing): `codesearch gym "
                "tasks` lists them; --blueprints seeds-all takes every seed"
            )
        gym = adapter.McpGym.for_task(task, settings, limits)
    sys.stderr.flush()
    return int(adapter.serve(gym, args.transport, listen))
