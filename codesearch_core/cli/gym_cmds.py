"""Sub-commands of the gym: `eval --agent` (an agent's episodes on a task set, stored as an eval
run), `gym tasks` (the task set as the agent sees it) and `gym serve` (the task set as an OpenEnv
environment server, for trainers: `gym.openenv_server`).

`eval --agent` takes the engines `reference` (the blueprint's own calls, then their findings: no
model), `import --from FILE` (recorded episodes replayed through the environment), and the model
engines `openai` and `vllm` (`gym.chat`). Its `--blueprints` names the same sets as every other
command's (`corpora.seed_sets`): `seeds` the fixture corpora's seed file, `seeds-all` every seed
file, the real packages' too (their tasks are played when their corpora are fetched).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, cast

from codesearch_core.errors import InputFileError

EXIT_OK = 0
#: `GymSettings`' defaults, named here so that building the parser does not import the gym (and
#: with it the store and export: DuckDB, pandas); a test checks they are the same.
DEFAULT_MAX_TURNS = 4
DEFAULT_PARALLEL = 8
DEFAULT_BETA = 1.0
DEFAULT_MAX_SESSIONS = 128  # `gym.ServerSettings`'
DEFAULT_SESSION_IDLE_S = 600.0  # `gym.ServerSettings`'


def _limits(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    p.add_argument("--max-turns", type=int, default=DEFAULT_MAX_TURNS, metavar="T",
                   help=f"turns per episode (default {DEFAULT_MAX_TURNS})")  # fmt: skip
    p.add_argument("--parallel", type=int, default=DEFAULT_PARALLEL, metavar="P",
                   help=f"calls per turn (default {DEFAULT_PARALLEL})")  # fmt: skip
    add_beta_argument(p)


def add_beta_argument(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--beta`: the reward's F-beta (here and on `codesearch mcp`)."""
    p.add_argument("--beta", type=float, default=DEFAULT_BETA, metavar="B",
                   help="the reward's span F-beta: 1 is F1 (the default), 0.5 weighs precision "
                   "over recall as SWE-grep does (docs/training.md)")  # fmt: skip


def add_agent_arguments(p: argparse.ArgumentParser, *, with_flag: bool = True) -> None:
    """The episode's limits; and `--agent` itself on `eval` (`with_flag`)."""
    g = p.add_argument_group("agent episodes" + (" (--agent)" if with_flag else ""))
    if with_flag:
        g.add_argument(
            "--agent",
            action="store_true",
            help="evaluate an agent in the gym: multi-turn episodes with parallel calls, read_file "
            "and submit, rewarded on the submitted locations",
        )
        from codesearch_core.cli.agent_config import add_config_arguments

        add_config_arguments(g)
    _limits(g)


def add_task_set_arguments(p: argparse.ArgumentParser) -> None:
    """`--blueprints`, `--tag`, `--split` and `--db`: the task set of `gym tasks`, `gym serve` and
    `rollouts` (`agent_tasks` reads them)."""
    from codesearch_core.cli.propose_cmds import seed_sets_help

    p.add_argument("--blueprints", default="seeds", metavar="SOURCE",
                   help=f"the task set: {seed_sets_help()}; 'store', a blueprints JSONL file, "
                   "tag:NAME (the seeds with a tag) or split:eval")  # fmt: skip
    p.add_argument("--tag", help="only blueprints with this tag")
    p.add_argument("--split", choices=("train", "eval"), help="only blueprints of this split")
    p.add_argument("--db", type=Path, default=None, metavar="PATH", help="the store")


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "gym",
        help="the gym: code-search tasks as multi-turn episodes for agents and RL trainers",
        description="The gym's tasks and servers. Evaluate an agent with `codesearch eval --agent`.",
    )
    gym_sub = p.add_subparsers(dest="gym_command", required=True, metavar="COMMAND")
    t = gym_sub.add_parser(
        "tasks",
        help="list the tasks of a blueprint set as the agent sees them",
        description="One JSON object a line: the blueprint id, the prompt messages and the corpus; "
        "tasks whose corpus is not here are named on stderr.",
    )
    add_task_set_arguments(t)
    t.set_defaults(func=cmd_tasks)
    _register_serve(gym_sub)
    _register_package(gym_sub)


def _register_serve(gym_sub: argparse._SubParsersAction[Any]) -> None:
    # Names and defaults only: OpenEnv is imported when the server starts, not to build the parser.
    s = gym_sub.add_parser(
        "serve",
        help="serve the tasks as an OpenEnv environment (WebSocket or plain-HTTP sessions)",
        description="An OpenEnv 0.3 server (its FastAPI app, /ws sessions): reset(blueprint_id=ID "
        "| index=N | seed=S) starts an episode, each step is one turn of calls, the last one "
        "carries the reward. Over plain HTTP, /session/reset answers a session_id that "
        "/session/step and /session/state take (idle sessions expire: --session-idle-s). "
        "Listens on 127.0.0.1 unless given --host and a token; with a token "
        "every request needs 'Authorization: Bearer TOKEN'. Ctrl-C or SIGTERM stops it and every "
        "open episode.",
    )
    s.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; any other needs a token)")  # fmt: skip
    s.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    s.add_argument("--token", default=None,
                   help="require 'Authorization: Bearer TOKEN' on every request (default: the "
                   "environment variable CODESEARCH_GYM_TOKEN, which ps does not show)")  # fmt: skip
    s.add_argument("--max-sessions", type=int, default=DEFAULT_MAX_SESSIONS, metavar="N",
                   help=f"sessions (clients) at once, over each transport: WebSocket and plain-HTTP "
                   f"/session/* (default {DEFAULT_MAX_SESSIONS})")  # fmt: skip
    s.add_argument("--session-idle-s", type=float, default=DEFAULT_SESSION_IDLE_S, metavar="S",
                   help="a plain-HTTP session (/session/*) expires after S seconds without a "
                   f"request (default {DEFAULT_SESSION_IDLE_S:g})")  # fmt: skip
    add_task_set_arguments(s)
    _limits(s)
    s.set_defaults(func=cmd_serve)


def _register_package(gym_sub: argparse._SubParsersAction[Any]) -> None:
    k = gym_sub.add_parser(
        "package",
        help="write the gym as an OpenEnv environment package (openenv.yaml, server, uv.lock)",
        description="Write an OpenEnv environment package into OUT_DIR (new or empty): "
        "openenv.yaml, pyproject.toml (its `server` script: `gym serve` with the task set and "
        "limits given here), server/app.py and uv.lock (`uv lock`, resolved against this "
        "checkout). `openenv validate OUT_DIR` checks it; `uv run --project OUT_DIR server` "
        "serves it.",
    )
    k.add_argument("out", type=Path, metavar="OUT_DIR", help="the package's folder (new or empty)")
    k.add_argument("--no-lock", action="store_true",
                   help="do not run `uv lock` (openenv validate then misses uv.lock)")  # fmt: skip
    add_task_set_arguments(k)
    _limits(k)
    k.set_defaults(func=cmd_package)


def settings_from(args: argparse.Namespace) -> Any:
    from codesearch_core.gym import GymSettings

    try:
        return GymSettings(max_turns=args.max_turns, max_parallel=args.parallel, beta=args.beta)
    except ValueError as err:
        raise InputFileError(str(err)) from None


def agent_tasks(args: argparse.Namespace) -> tuple[Any, str]:
    """The task set of `--blueprints` after --tag / --split; tasks whose corpus is missing are
    named on stderr and left out."""
    from codesearch_core.cli.eval_sources import select_blueprints
    from codesearch_core.gym import as_tasks, check_playable, missing_summary

    blueprints, label = select_blueprints(args)
    tasks = as_tasks(blueprints)
    if tasks.missing:
        print(missing_summary(tasks.missing), file=sys.stderr)
    return check_playable(tasks, label, doing="evaluate"), label


def cmd_tasks(args: argparse.Namespace) -> int:
    from codesearch_core.gym import DEFAULT_SETTINGS, prompt_messages

    tasks, _ = agent_tasks(args)
    for task in tasks.tasks:
        bp = task.blueprint
        line = {
            "blueprint_id": bp.id,
            "corpus": bp.corpus,
            "prompt": prompt_messages(bp, DEFAULT_SETTINGS),
        }
        print(json.dumps(line, ensure_ascii=False))
    return EXIT_OK


def server_settings_from(args: argparse.Namespace) -> Any:
    """Where and how to listen (`gym serve`, `codesearch mcp --transport http`); a non-loopback
    host without a token is refused here, before anything is loaded."""
    import os

    from codesearch_core.gym import TOKEN_ENV, ServerSettings

    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV, "")
    # `codesearch mcp` shares the rule and has no session flags: their defaults then.
    sessions = {name: getattr(args, name) for name in ("max_sessions", "session_idle_s")
                if getattr(args, name, None) is not None}  # fmt: skip
    try:
        return ServerSettings(host=args.host, port=args.port, token=token, **sessions)
    except ValueError as err:
        raise InputFileError(str(err)) from None


def cmd_serve(args: argparse.Namespace) -> int:
    """`codesearch gym serve`: the task set as an OpenEnv server, until Ctrl-C / SIGTERM."""
    from codesearch_core.gym import serve_openenv

    server = server_settings_from(args)
    settings = settings_from(args)
    tasks, label = agent_tasks(args)
    print(f"codesearch gym: serving {len(tasks.tasks)} task(s) of {label} (at most "
          f"{settings.max_turns} turns of {settings.max_parallel} calls; "
          f"{'a token' if server.token else 'no token'})…", file=sys.stderr)  # fmt: skip
    return int(serve_openenv(tasks.tasks, settings, server))


def serve_main(argv: list[str]) -> int:
    """`codesearch gym serve ARGV`: an OpenEnv package's `server` script."""
    from codesearch_core.cli import main

    return main(["gym", "serve", *argv])


def openenv_app(argv: list[str]) -> Any:
    """The ASGI app `codesearch gym serve ARGV` would serve (an OpenEnv package's `app`, for
    uvicorn): the same checks, the same task set."""
    from codesearch_core.cli import build_parser
    from codesearch_core.gym import openenv_app as app_of

    args = build_parser(["gym", "serve"]).parse_args(["gym", "serve", *argv])
    server = server_settings_from(args)
    tasks, _ = agent_tasks(args)
    return app_of(tasks.tasks, settings_from(args), server)


#: `gym package`'s flags baked into the package's `server` (the task set and the episode limits).
_PACKAGED_FLAGS = (("--blueprints", "blueprints"), ("--tag", "tag"), ("--split", "split"),
                   ("--db", "db"), ("--max-turns", "max_turns"), ("--parallel", "parallel"),
                   ("--beta", "beta"))  # fmt: skip


def cmd_package(args: argparse.Namespace) -> int:
    """`codesearch gym package OUT_DIR`: the task set as an OpenEnv environment package."""
    from codesearch_core.gym import write_package

    settings_from(args)  # bad limits are refused before anything is written
    tasks, label = agent_tasks(args)
    serve_args: list[str] = []
    for flag, name in _PACKAGED_FLAGS:
        value = getattr(args, name, None)
        if value is not None:
            serve_args += [flag, str(value.resolve() if isinstance(value, Path) else value)]
    try:
        package = write_package(args.out, serve_args, lock=not args.no_lock)
    except ValueError as err:
        raise InputFileError(str(err)) from None
    print(f"wrote an OpenEnv package of {len(tasks.tasks)} task(s) of {label} to {package.folder}",
          file=sys.stderr)  # fmt: skip
    if package.lock_error:
        print(f"no uv.lock: {package.lock_error}", file=sys.stderr)
        return 1 if not args.no_lock else EXIT_OK
    print(f"check it: openenv validate {package.folder}; serve it: uv run --project "
          f"{package.folder} server", file=sys.stderr)  # fmt: skip
    return EXIT_OK


def agent_policy(args: argparse.Namespace, tasks: Any) -> Any:
    """The policy `--engine` names (`eval --agent`, `rollouts`)."""
    from codesearch_core.gym import ReferencePolicy, ReplayPolicy, read_recorded

    if args.engine == "reference":
        return ReferencePolicy()
    if args.engine == "import":
        if args.from_file is None:
            raise InputFileError("--engine import needs --from FILE (recorded episodes, JSONL)")
        recorded = list(read_recorded(args.from_file))
        known = {t.blueprint.id for t in tasks.tasks}
        unknown = sorted({r.blueprint_id for r in recorded} - known)
        if unknown:
            raise InputFileError(
                f"{args.from_file}: {len(unknown)} episode(s) of blueprints not in the set "
                f"({', '.join(unknown[:5])}): give the --blueprints they were recorded on"
            )
        return ReplayPolicy(recorded, model=args.from_file.name)
    if args.engine in ("openai", "vllm"):
        return _chat_policy(args)
    raise InputFileError(
        f"--agent takes the engines reference, import, openai and vllm, not {args.engine}"
    )


def _chat_policy(args: argparse.Namespace) -> Any:
    """A chat model's policy with `eval`'s model and sampling flags. The server is asked first
    (down, or not serving --model: an error before any episode); vLLM starts here."""
    from codesearch_core.cli.eval_sources import check_server
    from codesearch_core.cli.propose_cmds import build_engine, sampling_settings
    from codesearch_core.engines import OpenAIEngine, VllmEngine
    from codesearch_core.gym import ChatPolicy, OpenAIChat, VllmChat

    sampling = sampling_settings(args)
    if args.engine == "openai":
        check_server(args)
        return ChatPolicy(OpenAIChat(cast(OpenAIEngine, build_engine(args)), sampling))
    if args.batch_size < 1:
        raise InputFileError(f"--batch-size must be at least 1, got {args.batch_size}")
    engine = cast(VllmEngine, build_engine(args))  # what build_engine gives for --engine vllm
    for notice in getattr(engine, "notices", ()):
        print(f"note: {notice}", file=sys.stderr)
    return ChatPolicy(VllmChat(engine, sampling, batch_size=args.batch_size))


def _workers(args: argparse.Namespace, jobs: int) -> int | None:
    """Episodes played at once: a model's turns wait on it, so as many as it takes in at once
    (the server's --max-concurrency, vLLM's --batch-size); the gym's own default otherwise."""
    if args.engine == "openai":
        return max(1, min(int(args.max_concurrency), jobs))
    if args.engine == "vllm":
        return max(1, min(int(args.batch_size), jobs))
    return None


def _left_out(missing: Any) -> dict[str, Any]:
    """The summary's note of the tasks left out because their corpus is not here."""
    if not missing:
        return {}
    return {"left_out": {"corpus_missing": {"blueprints": len(missing), "reason": missing[0][1]}}}


def cmd_agent_eval(args: argparse.Namespace) -> int:
    """`codesearch eval --agent`: episodes of one policy on a task set, stored and summarized."""
    from dataclasses import replace

    from codesearch_core.cli.eval_sources import store_and_print
    from codesearch_core.engines import MAX_N
    from codesearch_core.gym import evaluate_agent

    config = None
    if args.config is not None:  # the TOML's run on the flags (`cli.agent_config`)
        from codesearch_core.cli.agent_config import apply_config

        config = apply_config(args)
    elif args.resume is not None:
        raise InputFileError("--resume continues a run begun with --config FILE: give that file")
    if args.engine is None:
        raise InputFileError("give --engine (reference, import, openai or vllm)")
    if not 1 <= args.n <= MAX_N:
        raise InputFileError(f"--n must be 1 to {MAX_N} (episodes per task), got {args.n}")
    settings = config.settings if config is not None else settings_from(args)
    tasks, label = agent_tasks(args)
    policy: Any = None
    resume = None
    try:
        policy = agent_policy(args, tasks)
        chosen = tasks.tasks
        if args.engine == "import":  # only the blueprints the file recorded an episode of
            chosen = tuple(t for t in chosen if t.blueprint.id in policy.by_blueprint)
            label = f"{label} · {args.from_file.name}"
        if config is not None:
            from codesearch_core.cli.agent_config import config_resume

            chosen = chosen[: config.select["limit"]]
            resume = config_resume(args, config, policy, chosen, settings,
                                   _left_out(tasks.missing))  # fmt: skip
            print(f"eval run {resume.run_id}: stored as it goes ({len(resume.done)} episode(s) "
                  "already)", file=sys.stderr)  # fmt: skip
            label = f"{label} · {config.path.name}"
        print(f"playing {args.n} episode(s) of {policy.name}:{policy.model} on each of "
              f"{len(chosen)} task(s) of {label} (at most {settings.max_turns} turns of "
              f"{settings.max_parallel} calls)…", file=sys.stderr)  # fmt: skip
        workers = _workers(args, len(chosen) * args.n)
        if config is not None and config.max_concurrent is not None:
            workers = config.max_concurrent
        try:
            run = evaluate_agent(policy, chosen, n=args.n, label=label, settings=settings,
                                 workers=workers, resume=resume)  # fmt: skip
        except BaseException:
            if resume is not None:  # what was finished is in the store (evaluate_agent saved it)
                print(f"eval run {resume.run_id} stored unfinished: `codesearch eval --agent "
                      f"--config {args.config} --resume {resume.run_id}` continues it",
                      file=sys.stderr)  # fmt: skip
            raise
        if getattr(policy, "stopped", 0):  # a request that failed for good stopped its episode
            print(f"{policy.stopped} episode(s) stopped by a failed request, first: "
                  f"{policy.failures[0]}", file=sys.stderr)  # fmt: skip
    finally:
        if hasattr(policy, "close"):  # a chat backend's connections, vLLM's generating thread
            policy.close()
        if args.engine == "vllm":
            from codesearch_core.engines import shutdown_vllm_engine

            shutdown_vllm_engine()
    if tasks.missing:
        run = replace(run, summary={**run.summary, **_left_out(tasks.missing)})
    keys = ("episodes", "success_rate", "mean_reward", "mean_turns", "mean_calls",
            "invalid_call_rate", "submit_rate", "mean_span_f1", "mean_precision", "mean_recall",
            "mean_calls_per_turn", "mean_evidence_drop")  # fmt: skip
    store_and_print(args, run, "agent eval run", keys, ("success_rate", "mean_reward"))
    return EXIT_OK
