"""`codesearch eval --agent --config FILE [--resume [RUN_ID]]`: an agent eval from a TOML file
(`gym.eval_config`: vf-eval's key names where they fit), stored as it goes, continued by --resume.

The file is the whole run: its values are put on `eval`'s flags (so the policy, the server check
and the task set are built as for flags), and a flag it covers given beside it is an error rather
than a silent override. The run stores its config (`summary.config`) and is saved to the store
every few seconds and when it fails or is interrupted, marked unfinished (`store.UNFINISHED`).
`--resume RUN_ID` continues that run under the same id: the same file is required (any key that
differs is named), its episodes are replayed from their stored trajectories (a reward that
replays differently is refused) and only the task/sample pairs it lacks are played.
`--resume` without an id takes the newest unfinished run of the same config.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from codesearch_core.errors import InputFileError

if TYPE_CHECKING:
    from codesearch_core.gym import AgentEvalConfig, GymSettings, Policy, Resume, Task
    from codesearch_core.store import EvalRun, Store

#: `--resume` without a RUN_ID: the newest unfinished run of the same config.
LATEST: Final = "latest"
#: The flags (argparse dests) a config file sets: given beside --config, they are refused.
_COVERED: Final = (
    "engine", "model", "from_file", "n", "max_concurrency", "base_url", "api_key", "timeout",
    "temperature", "top_p", "max_tokens", "seed", "blueprints", "tag", "split", "max_turns",
    "parallel", "beta",
)  # fmt: skip
_FLAG: Final = {"from_file": "--from"}


def add_config_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--config", type=Path, metavar="FILE",
                       help="the whole agent eval from a TOML file (vf-eval's keys: model, "
                       "num_rollouts, [client], [sampling], [select]; the gym's: engine, [env]); "
                       "stored as it goes (docs/gym_verifiers.md)")  # fmt: skip
    group.add_argument("--resume", nargs="?", const=LATEST, metavar="RUN_ID",
                       help="with --config: continue an unfinished run (the newest of the same "
                       "config without RUN_ID), playing only the episodes it lacks")  # fmt: skip


def apply_config(args: argparse.Namespace) -> AgentEvalConfig:
    """Read `args.config` and put its run on `args`; a covered flag given too is an error."""
    from codesearch_core.cli import build_parser
    from codesearch_core.gym import load_eval_config

    config = load_eval_config(args.config)
    defaults = build_parser(["eval"]).parse_args(["eval", "--agent"])
    given = [d for d in _COVERED if hasattr(args, d) and getattr(args, d) != getattr(defaults, d)]
    if given:
        flags = ", ".join(_FLAG.get(d, "--" + d.replace("_", "-")) for d in given)
        raise InputFileError(f"{flags} given beside --config: the file is the whole run, set "
                             "it there")  # fmt: skip
    args.engine, args.model, args.n = config.engine, config.model, config.num_rollouts
    args.from_file = config.import_file
    client, sampling, select = config.client, config.sampling, config.select
    args.base_url = client["base_url"]
    args.api_key = os.environ.get(client["api_key_var"]) or None
    if client["timeout"] is not None:
        args.timeout = float(client["timeout"])
    if config.max_concurrent is not None:  # episodes at once: the server's, or vLLM's batch
        args.max_concurrency = args.batch_size = config.max_concurrent
    args.temperature, args.top_p, args.seed = (
        sampling["temperature"],
        sampling["top_p"],
        sampling["seed"],
    )
    if sampling["max_tokens"] is not None:
        args.max_tokens = sampling["max_tokens"]
    args.blueprints, args.tag, args.split = select["blueprints"], select["tag"], select["split"]
    return config


def config_resume(
    args: argparse.Namespace,
    config: AgentEvalConfig,
    policy: Policy,
    tasks: tuple[Task, ...],
    settings: GymSettings,
    summary: dict[str, Any],
) -> Resume:
    """How the run is stored as it goes: a new run, or (`--resume`) the stored one continued."""
    from codesearch_core.gym import Resume, new_run_id, replayed

    wanted = config.to_dict()
    extra = {"config": wanted, **summary}
    if args.resume is None:
        created = datetime.now(UTC)
        return Resume(new_run_id(policy, created), created.isoformat(), _checkpoint(args),
                      summary=extra)  # fmt: skip
    from codesearch_core.cli.store_access import open_store

    with open_store(args.db) as store:
        run = _stored_run(store, args.resume, wanted, config)
    done = replayed(run, tasks, settings)
    return Resume(run.run_id, run.created_at, _checkpoint(args), done, summary=extra)


def _checkpoint(args: argparse.Namespace) -> Callable[[EvalRun], None]:
    from codesearch_core.cli.store_access import open_store

    def save(run: EvalRun) -> None:
        # The store is opened for each save only: the studio may use it in between.
        with open_store(args.db) as store:
            store.evals.checkpoint(run)

    return save


def _stored_run(
    store: Store, run_id: str, wanted: dict[str, Any], config: AgentEvalConfig
) -> EvalRun:
    from codesearch_core.gym import config_differences
    from codesearch_core.store import UNFINISHED

    if run_id == LATEST:
        mine = [r for r in store.evals.list() if r.summary.get("config") == wanted]
        unfinished = [r for r in mine if UNFINISHED in r.summary]
        if not unfinished:
            raise InputFileError(f"no unfinished run of {config.path} in the store to resume"
                                 f"{' (its runs are finished)' if mine else ''}")  # fmt: skip
        run_id = unfinished[0].run_id
    run = store.evals.get(run_id)
    if run is None:
        raise InputFileError(f"no eval run {run_id!r} in the store to resume")
    stored = run.summary.get("config")
    if not isinstance(stored, dict):
        raise InputFileError(f"eval run {run_id} was not begun from a config file: it cannot be "
                             "resumed")  # fmt: skip
    differ = config_differences(stored, wanted)
    if differ:
        raise InputFileError(f"{config.path} is not the config of eval run {run_id}: "
                             f"{', '.join(differ)} differ")  # fmt: skip
    if UNFINISHED not in run.summary:
        raise InputFileError(f"eval run {run_id} is finished: nothing to resume")
    return run
