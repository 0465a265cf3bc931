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
write and replay; `episode_export_counts`, `episode_frame`, `Replay`, `ReplayMismatch`), the policies (the chat model's: `ChatPolicy`
over an `OpenAIChat` or `VllmChat` backend), `evaluate_agent`, `rollouts` (episodes kept in the
store; where they are played is a `Player`: `play_here`, or `play_on_ray` with a policy recipe
such as `openai_policy`), the tasks (`Task`, `as_tasks`, `seed_blueprints`), `ServerSettings` and `serve_openenv`;
`text_calls` (the calls a model's text writes in its tool format, for a backend of one's own) and
`trl_adapter()` (`gym.trl_env`, imported when asked: `codesearch train grpo`).
Imports `verify` (its Ray pieces), `export` and `store` and below.
"""

from collections.abc import Sequence
from types import ModuleType

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
from codesearch_core.gym.episode import EndReason, Episode, EpisodeResult, Observation, StepResult
from codesearch_core.gym.evaluate import (
    AGENT_ENGINE_PREFIX,
    AGENT_METRICS,
    agent_summary,
    evaluate_agent,
    play,
)
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
from codesearch_core.gym.rollout import (
    DEFAULT_MIN_REWARD,
    Player,
    RolloutReport,
    check_rollout_args,
    play_here,
    rollouts,
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
    "ChatBackend",
    "ChatPolicy",
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
    "RewardWeights",
    "RolloutReport",
    "ServerSettings",
    "StepResult",
    "Task",
    "Tasks",
    "VllmChat",
    "agent_summary",
    "as_tasks",
    "check_playable",
    "check_rollout_args",
    "episode_export_counts",
    "episode_frame",
    "evaluate_agent",
    "export_episodes",
    "gym_tools",
    "is_loopback",
    "missing_summary",
    "openai_policy",
    "play",
    "play_here",
    "play_on_ray",
    "prompt_messages",
    "read_recorded",
    "rollouts",
    "seed_blueprints",
    "seed_files",
    "serve_openenv",
    "system_prompt",
    "text_calls",
    "trl_adapter",
    "user_prompt",
]


def serve_openenv(tasks: Sequence[Task], settings: GymSettings, server: ServerSettings) -> int:
    """Serve `tasks` as an OpenEnv environment until Ctrl-C / SIGTERM (`gym.openenv_server.serve`).
    OpenEnv (FastAPI, uvicorn, Gradio: seconds to import) is imported here, when called."""
    from codesearch_core.gym.openenv_server import TaskSet, serve

    return serve(TaskSet(tasks, settings), server)


def trl_adapter() -> ModuleType:
    """`gym.trl_env`, the TRL adapter (`environment_factory`, `trl_dataset`, ...), imported when
    asked: a layer above (`train`) reaches it through this package, and `import gym` stays light."""
    from codesearch_core.gym import trl_env

    return trl_env
