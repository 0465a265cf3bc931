"""The gym: code-search tasks as multi-turn episodes for agents, and the ways trainers plug in.

An episode (`gym.episode.Episode`) is one blueprint: the agent sees its intent and corpus, calls
`ripgrep_search`, `ast_grep_search` (the studio's tools, unchanged), `read_file` and `submit` in
at most `max_turns` turns of up to `max_parallel` parallel calls, and is rewarded once, at the end,
on the locations it submitted (`gym.reward`). Policies without a model (`gym.policies`: the
reference, a replay of recorded episodes) and with one (`gym.chat`) play it; `evaluate_agent`
stores their episodes as an eval run. The trainers' adapters (verifiers, OpenEnv, TRL) live in
modules of their own, imported only by who uses them: `serve_openenv` (`codesearch gym serve`)
imports OpenEnv when called; trainers import `gym.openenv_server` / `gym.openenv_client` directly.

Public API: `Episode`, `EpisodeResult`, `StepResult`, `Observation`, `GymSettings`,
`RewardWeights`, `gym_tools`, `prompt_messages`, the agent exports' gym side (`export_episodes`:
write and replay; `episode_export_counts`, `episode_frame`, `Replay`, `ReplayMismatch`),
`correct_step` (a stored episode with one turn's calls edited, played again and kept beside it:
`Correction`; `export_step_pairs`: the `dpo-steps` export of them), the policies (the chat model's: `ChatPolicy`
over an `OpenAIChat` or `VllmChat` backend), `evaluate_agent` (stored as it goes and resumed:
`Resume`, `replayed`, `new_run_id`; from a TOML file: `load_eval_config`, `AgentEvalConfig`,
`config_differences`), `rollouts` (episodes kept in the
store; where they are played is a `Player`: `play_here`, or `play_on_ray` with a policy recipe
such as `openai_policy`), the tasks (`Task`, `as_tasks`, `seed_blueprints`), `ServerSettings`, `serve_openenv`
and `openenv_app` (the same server's ASGI app), `write_package` (`codesearch gym package`);
`text_calls` (the calls a model's text writes in its tool format, for a backend of one's own) and
`trl_adapter()` (`gym.trl_env`, imported when asked: `codesearch train grpo`) and `mcp_adapter()`
(`gym.mcp_server`, the MCP server, imported when asked: `codesearch mcp`).
Imports `verify` (its Ray pieces), `export` and `store` and below.
"""

from collections.abc import Sequence
from types import ModuleType
from typing import Any

from codesearch_core.gym.actions import (
    READ_FILE,
    SEARCH_TOOLS,
    SUBMIT,
    TOOL_NAMES,
    RawCall,
    Refusal,
    gym_tools,
)
from codesearch_core.gym.chat import ChatBackend, ChatPolicy, OpenAIChat, Reply, VllmChat
from codesearch_core.gym.chat_calls import text_calls
from codesearch_core.gym.correct import Correction, correct_step, export_step_pairs
from codesearch_core.gym.episode import EndReason, Episode, EpisodeResult, Observation, StepResult
from codesearch_core.gym.eval_config import AgentEvalConfig, config_differences, load_eval_config
from codesearch_core.gym.evaluate import (
    AGENT_ENGINE_PREFIX,
    AGENT_METRICS,
    Resume,
    agent_summary,
    evaluate_agent,
    new_run_id,
    play,
    replayed,
)
from codesearch_core.gym.openenv_package import WrittenPackage, write_package
from codesearch_core.gym.openenv_settings import TOKEN_ENV, ServerSettings, is_loopback
from codesearch_core.gym.policies import (
    Policy,
    Recorded,
    ReferencePolicy,
    ReplayPolicy,
    read_recorded,
)
from codesearch_core.gym.prompt import prompt_messages, system_prompt, user_prompt
from codesearch_core.gym.replay import (
    Replay,
    ReplayMismatch,
    ReplayReport,
    episode_export_counts,
    episode_frame,
    export_episodes,
)
from codesearch_core.gym.reward import WEIGHT_OF, weighted_terms
from codesearch_core.gym.rollout import (
    DEFAULT_MIN_REWARD,
    Player,
    RolloutReport,
    check_rollout_args,
    play_here,
    rollouts,
    stored_episode,
)
from codesearch_core.gym.rollout_ray import openai_policy, play_on_ray
from codesearch_core.gym.settings import (
    DEFAULT_SETTINGS,
    READ_MAX_LINES,
    SUCCESS_REWARD,
    GymSettings,
    RewardWeights,
)
from codesearch_core.gym.tasks import (
    Task,
    Tasks,
    as_tasks,
    check_playable,
    missing_summary,
    seed_blueprints,
    seed_files,
)

__all__ = [
    "AGENT_ENGINE_PREFIX",
    "AGENT_METRICS",
    "DEFAULT_MIN_REWARD",
    "DEFAULT_SETTINGS",
    "READ_FILE",
    "READ_MAX_LINES",
    "SEARCH_TOOLS",
    "SUBMIT",
    "SUCCESS_REWARD",
    "TOKEN_ENV",
    "TOOL_NAMES",
    "WEIGHT_OF",
    "AgentEvalConfig",
    "ChatBackend",
    "ChatPolicy",
    "Correction",
    "EndReason",
    "Episode",
    "EpisodeResult",
    "GymSettings",
    "Observation",
    "OpenAIChat",
    "Player",
    "Policy",
    "RawCall",
    "Recorded",
    "ReferencePolicy",
    "Refusal",
    "Replay",
    "ReplayMismatch",
    "ReplayPolicy",
    "ReplayReport",
    "Reply",
    "Resume",
    "RewardWeights",
    "RolloutReport",
    "ServerSettings",
    "StepResult",
    "Task",
    "Tasks",
    "VllmChat",
    "WrittenPackage",
    "agent_summary",
    "as_tasks",
    "check_playable",
    "check_rollout_args",
    "config_differences",
    "correct_step",
    "episode_export_counts",
    "episode_frame",
    "evaluate_agent",
    "export_episodes",
    "export_step_pairs",
    "gym_tools",
    "is_loopback",
    "load_eval_config",
    "mcp_adapter",
    "missing_summary",
    "new_run_id",
    "openai_policy",
    "openenv_app",
    "play",
    "play_here",
    "play_on_ray",
    "prompt_messages",
    "read_recorded",
    "replayed",
    "rollouts",
    "seed_blueprints",
    "seed_files",
    "serve_openenv",
    "stored_episode",
    "system_prompt",
    "text_calls",
    "trl_adapter",
    "user_prompt",
    "weighted_terms",
    "write_package",
]


def serve_openenv(tasks: Sequence[Task], settings: GymSettings, server: ServerSettings) -> int:
    """Serve `tasks` as an OpenEnv environment until Ctrl-C / SIGTERM (`gym.openenv_server.serve`).
    OpenEnv (FastAPI, uvicorn, Gradio: seconds to import) is imported here, when called."""
    from codesearch_core.gym.openenv_server import TaskSet, serve

    return serve(TaskSet(tasks, settings), server)


def openenv_app(tasks: Sequence[Task], settings: GymSettings, server: ServerSettings) -> Any:
    """The ASGI app `serve_openenv` serves (FastAPI; an OpenEnv package's `app`, for any ASGI
    server). OpenEnv is imported here, when called."""
    from codesearch_core.gym.openenv_server import TaskSet, create_gym_app

    task_set = TaskSet(tasks, settings)
    return create_gym_app(task_set, server.max_sessions, server.token, server.session_idle_s)


def trl_adapter() -> ModuleType:
    """`gym.trl_env`, the TRL adapter (`environment_factory`, `trl_dataset`, ...), imported when
    asked: a layer above (`train`) reaches it through this package, and `import gym` stays light."""
    from codesearch_core.gym import trl_env

    return trl_env


def mcp_adapter() -> ModuleType:
    """`gym.mcp_server`, the MCP server (`McpGym`, `serve`), imported when asked: the MCP SDK
    (Starlette, uvicorn) is paid by `codesearch mcp` only."""
    from codesearch_core.gym import mcp_server

    return mcp_server
