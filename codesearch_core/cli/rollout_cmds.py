"""Sub-command: rollouts. K episodes per task in the gym, the good ones kept in the store with their
provenance (`gym.rollout`): reference trajectories without a model (`--engine reference`), or an
agent's own (`import`, and the model engines `eval --agent` has).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from codesearch_core.errors import InputFileError

EXIT_OK = 0
EXIT_INTERRUPTED = 130
#: `gym.DEFAULT_MIN_REWARD`, named here so that building the parser does not import the gym (a
#: test checks they are the same).
DEFAULT_MIN_REWARD = 0.9


def register(sub: argparse._SubParsersAction[Any]) -> None:
    from codesearch_core.cli.gym_cmds import add_agent_arguments, add_task_set_arguments
    from codesearch_core.cli.propose_cmds import add_engine_arguments
    from codesearch_core.cli.verify_cmds import add_ray_argument

    p = sub.add_parser(
        "rollouts",
        help="sample agent episodes in the gym and keep the good ones in the store",
        description=(
            "Play K episodes per task (every blueprint of --blueprints whose corpus is here), keep "
            "those with reward >= --min-reward (best first: higher reward, fewer turns, fewer "
            "calls; the same calls in the same order once) and store them with their provenance. "
            "Ctrl-C keeps what was stored; a second run skips the tasks that have episodes of this "
            "engine and model."
        ),
    )
    p.add_argument("--engine", required=True, choices=("reference", "import", "openai", "vllm"),
                   help="who plays: reference (the blueprint's own calls, no model), import "
                   "(recorded episodes, --from), or a model")  # fmt: skip
    p.add_argument("--from", dest="from_file", type=Path, metavar="FILE",
                   help="recorded episodes, one JSON object a line (--engine import)")  # fmt: skip
    p.add_argument("--k", type=int, default=1, metavar="K", help="episodes per task (default 1)")
    p.add_argument("--min-reward", type=float, default=DEFAULT_MIN_REWARD, metavar="R",
                   help=f"keep episodes with at least this reward (default {DEFAULT_MIN_REWARD})")  # fmt: skip
    add_task_set_arguments(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_ray_argument(p, "play each task's episodes as a Ray task (engines reference, import, "
                     "openai; serve a vLLM model and use openai)")  # fmt: skip
    add_engine_arguments(p)
    add_agent_arguments(p, with_flag=False)
    p.set_defaults(func=cmd_rollouts, n=1, skip_bad=False)


def cmd_rollouts(args: argparse.Namespace) -> int:
    """With vLLM, under the engine's stop path from its start on: SIGINT / SIGTERM stop the run
    and the engine within the grace (the Ctrl-C that waits for the tasks in flight would wait for
    a whole batch of generation)."""
    from codesearch_core.cli.propose_cmds import engine_interrupts

    try:
        with engine_interrupts(args.engine):
            return _rollouts(args)
    except KeyboardInterrupt:
        print("interrupted: the episodes stored before it are kept; the same command again goes "
              "on with the tasks left", file=sys.stderr)  # fmt: skip
        raise


def _rollouts(args: argparse.Namespace) -> int:
    from codesearch_core.cli.gym_cmds import agent_policy, agent_tasks, settings_from
    from codesearch_core.cli.interrupts import stop_on_ctrl_c
    from codesearch_core.cli.store_access import open_store
    from codesearch_core.gym import check_rollout_args, rollouts

    check_rollout_args(args.k, args.min_reward, k_name="--k", reward_name="--min-reward")
    if args.ray is not None and args.engine == "vllm":
        raise InputFileError(
            "--engine vllm does not run on --ray: every Ray task would load the model anew. Serve "
            "it (`vllm serve MODEL --enable-auto-tool-choice --tool-call-parser hermes`) and use "
            "--engine openai --base-url http://HOST:8000/v1 --ray ..."
        )
    settings = settings_from(args)
    tasks, label = agent_tasks(args)
    policy = agent_policy(args, tasks)
    chosen = tasks.tasks
    if args.engine == "import":
        chosen = tuple(t for t in chosen if t.blueprint.id in policy.by_blueprint)
    player = None if args.ray is None else _ray_player(args, policy, settings)
    where = "" if args.ray is None else f" as Ray tasks ({args.ray or 'local or $RAY_ADDRESS'})"
    print(f"playing {args.k} episode(s) of {policy.name}:{policy.model} on each of {len(chosen)} "
          f"task(s) of {label}{where}, keeping reward >= {args.min_reward}…", file=sys.stderr)  # fmt: skip
    try:
        with open_store(args.db) as store, stop_on_ctrl_c("the tasks in flight") as ctrl_c:
            report = rollouts(policy, chosen, store, k=args.k, min_reward=args.min_reward,
                              settings=settings, stop=ctrl_c, player=player)  # fmt: skip
    finally:
        if args.engine == "vllm":
            from codesearch_core.engines import shutdown_vllm_engine

            shutdown_vllm_engine()
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(
            f"{report.kept} episode(s) stored from {report.episodes} played on "
            f"{report.tasks - report.skipped_stored} task(s); {report.skipped_stored} task(s) "
            f"had episodes stored already; {report.below_min_reward} below the minimum reward, "
            f"{report.duplicates} duplicate(s); {len(report.unsolved)} task(s) with none kept"
        )
    return EXIT_INTERRUPTED if report.stopped else EXIT_OK


def _ray_player(args: argparse.Namespace, policy: Any, settings: Any) -> Any:
    """Episodes as Ray tasks: each task builds the policy from a recipe (`gym.rollout_ray`)."""
    from functools import partial

    from codesearch_core.gym import ReferencePolicy, ReplayPolicy, openai_policy, play_on_ray

    if args.engine == "reference":
        recipe: Any = ReferencePolicy
    elif args.engine == "import":
        recipe = partial(ReplayPolicy, list(policy.by_blueprint.values()), policy.model)
    else:  # openai: the same server settings and sampling, a client per task
        recipe = partial(openai_policy, policy.backend.engine.settings, policy.backend.sampling)
        policy.close()  # this process only labels and stores
    return play_on_ray(recipe, address=args.ray or None, settings=settings)
