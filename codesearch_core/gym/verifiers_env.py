"""The gym as a verifiers environment (verifiers 0.4, `import verifiers.v1 as vf`).

    from codesearch_core.gym.verifiers_env import load_environment
    env = load_environment(blueprints="seeds", max_turns=4, max_parallel=8)

verifiers 0.4 splits an environment into a taskset (the rows), a harness (the program that talks
to the model and runs its tools) and an env (how a task becomes an episode). Here:

- `CodeSearchTaskset`: one task per gym task (`gym.as_tasks`), its prompt the gym's own
  (`prompt_messages`: system and user), `id`/`name` the blueprint id;
- `CodeSearchHarness`: an in-process chat loop (verifiers allows one, as long as every model call
  goes through the rollout's interception endpoint, which records it on the trace). It owns one
  gym `Episode` per rollout and hands ALL tool calls of one assistant message to ONE
  `episode.step(...)`, so the gym's limits (P parallel calls a turn, T turns) are the gym's, not
  a per-call tool server's. It ends when the episode is done (submit, turn limit) or the model
  answers without a call; the whole `EpisodeResult.to_dict()` lands in `trace.info["gym"]` (the
  last turn's observations too, which no later request carries);
- `CodeSearchTask`: its `@vf.reward` is the episode's reward (weight 1), its `@vf.metric` the
  reward's components, counts and recorded metrics (precision, recall, calls per turn, evidence
  drop: recorded, never summed into the reward);
- `CodeSearchEnv`: the single agent seat, run on the local subprocess runtime by default (the
  searches run `rg`/`ast-grep` on this machine; verifiers' default runtime is a remote sandbox).

verifiers finds plugins by module name (`--env.taskset.id NAME` imports `NAME`), and a dotted id
does not resolve, so `load_environment` registers this module as `codesearch_gym` in-process;
`vf-eval` needs a top-level module of that name (docs/gym_verifiers.md has the one-line shim).
Nothing imports this module but who uses it: verifiers is the optional extra `gym`.
"""

from __future__ import annotations

import asyncio
import functools
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import verifiers.v1 as vf
from openai import AsyncOpenAI

from codesearch_core.corpora import SEED_SETS, load_seed_set, read_blueprints_jsonl
from codesearch_core.gym.actions import gym_tools
from codesearch_core.gym.episode import Episode
from codesearch_core.gym.prompt import system_prompt, user_prompt
from codesearch_core.gym.settings import GymSettings
from codesearch_core.gym.tasks import Task, as_tasks

#: The taskset id verifiers resolves this module by (see the module docstring).
TASKSET_ID: Final = "codesearch_gym"


class CodeSearchTasksetConfig(vf.TasksetConfig):
    """`--env.taskset.*`: which blueprints (a seed set, 'seeds' or 'seeds-all', or a blueprints
    JSONL file) and the limits."""

    blueprints: str = "seeds"
    max_turns: int = 4
    max_parallel: int = 8
    beta: float = 1.0  # the reward's span F-beta (`GymSettings.beta`)


class CodeSearchData(vf.TaskData):
    blueprint_id: str
    #: The blueprint source the harness finds the blueprint in again (the trace keeps the id,
    #: not the expected spans).
    blueprints: str
    max_turns: int
    max_parallel: int
    beta: float = 1.0
    info: dict[str, Any]


@functools.cache
def _tasks(source: str) -> dict[str, Task]:
    """The gym's tasks of `source` by blueprint id, loaded once a process (the taskset and every
    rollout's harness ask for them)."""
    if source in SEED_SETS:  # `seeds`, `seeds-all`: what they mean everywhere
        blueprints = load_seed_set(source)
    else:
        blueprints, _ = read_blueprints_jsonl(Path(source))
    return {t.blueprint.id: t for t in as_tasks(blueprints).tasks}


def _settings(data: CodeSearchData) -> GymSettings:
    return GymSettings(max_turns=data.max_turns, max_parallel=data.max_parallel, beta=data.beta)


class CodeSearchTask(vf.Task[CodeSearchData, vf.State, vf.TaskConfig]):
    @vf.reward
    async def episode_reward(self, trace: vf.Trace) -> float:
        """The gym's reward; 0 when the harness never finished an episode (it failed first)."""
        gym = trace.info.get("gym")
        return float(gym["info"]["reward"]) if isinstance(gym, Mapping) else 0.0

    @vf.metric
    async def episode(self, trace: vf.Trace) -> dict[str, float]:
        """The reward's components and the episode's counts, as metrics (weight 0)."""
        gym = trace.info.get("gym")
        if not isinstance(gym, Mapping):
            return {}
        info = gym["info"]
        return {
            **{k: float(v) for k, v in info["components"].items()},
            "span_f1": float(info["span_f1"]),
            "turns": float(info["turns"]),
            "calls": float(info["calls"]),
            "invalid_calls": float(info["invalid_calls"]),
            "submitted": float(info["end_reason"] == "submitted"),
            # precision, recall, calls_per_turn, evidence_seen, evidence_drop (`gym.reward`)
            **{k: float(v) for k, v in info.get("metrics", {}).items()},
        }


class CodeSearchTaskset(vf.Taskset[CodeSearchTask, CodeSearchTasksetConfig]):
    def load(self) -> Iterator[CodeSearchTask]:
        config: CodeSearchTasksetConfig = self.config
        settings = GymSettings(
            max_turns=config.max_turns, max_parallel=config.max_parallel, beta=config.beta
        )
        for task in _tasks(config.blueprints).values():
            bp = task.blueprint
            data = CodeSearchData(
                id=bp.id,
                name=bp.id,
                prompt=user_prompt(bp),
                system_prompt=system_prompt(settings),
                blueprint_id=bp.id,
                blueprints=config.blueprints,
                max_turns=config.max_turns,
                max_parallel=config.max_parallel,
                beta=config.beta,
                info={"blueprint_id": bp.id, "corpus": bp.corpus, "tags": list(bp.tags)},
            )
            yield CodeSearchTask(data, config.task)


class CodeSearchHarnessConfig(vf.HarnessConfig):
    pass


class CodeSearchHarness(vf.Harness[CodeSearchHarnessConfig]):
    APPENDS_SYSTEM_PROMPT = True
    NEEDS_CONTAINER = False
    #: The model picks searches, never code to execute: the tools are the gym's, checked by it.
    EXECUTES_CODE = False

    async def launch(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
    ) -> vf.ProgramResult:
        if not isinstance(data, CodeSearchData):  # a wire copy: validate it back
            data = CodeSearchData.model_validate(data.model_dump())
        task = _tasks(data.blueprints)[data.blueprint_id]
        episode = Episode(task.blueprint, task.corpus_root, _settings(data))
        system, prompt = self.resolve_prompt(data)
        # Chat messages as dicts (list[Any]: the openai SDK types each role as its own TypedDict).
        messages: list[Any] = [{"role": "system", "content": system or ""}]
        messages.append({"role": "user", "content": prompt})
        tools: list[Any] = gym_tools()
        client = AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=0)
        try:
            while not episode.done:
                response = await client.chat.completions.create(
                    model=ctx.model, messages=messages, tools=tools
                )
                message = response.choices[0].message
                calls = [c.model_dump() for c in message.tool_calls or ()]
                messages.append(
                    {"role": "assistant", "content": message.content, "tool_calls": calls}
                    if calls
                    else {"role": "assistant", "content": message.content or ""}
                )
                # One assistant message is one gym turn, whatever it holds (no call ends it).
                # The searches block on child processes: off the event loop.
                step = await asyncio.to_thread(episode.step, calls)
                messages.extend(
                    {"role": "tool", "tool_call_id": c["id"], "content": o.text}
                    for c, o in zip(calls, step.observations, strict=True)
                )
        finally:
            await client.close()
            # A rollout cut short (a model error, a deadline) still records its episode.
            trace.info["gym"] = episode.stop().to_dict()
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")


class CodeSearchEnvConfig(vf.EnvConfig):
    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


class CodeSearchEnv(vf.Env[CodeSearchEnvConfig]):
    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        await agents.agent.run(task)


__all__ = [
    "CodeSearchEnv",
    "CodeSearchHarness",
    "CodeSearchTaskset",
]


def load_environment(
    blueprints: str = "seeds",
    max_turns: int = 4,
    max_parallel: int = 8,
    beta: float = 1.0,
    **kwargs: Any,
) -> vf.Env:
    """The gym as a verifiers env: `blueprints` is a seed set ('seeds': the fixture corpora's
    seed file; 'seeds-all': every seed file, as everywhere else) or a blueprints JSONL file;
    `max_turns`/`max_parallel` the episode's limits; `beta` the reward's span F-beta; `kwargs` go to the env config (e.g.
    `timeout`, `retries`, or `agent=vf.AgentConfig(...)` for another runtime)."""
    GymSettings(max_turns=max_turns, max_parallel=max_parallel, beta=beta)  # fails early if bad
    sys.modules.setdefault(TASKSET_ID, sys.modules[__name__])
    config = CodeSearchEnvConfig(
        taskset=CodeSearchTasksetConfig(
            id=TASKSET_ID,
            blueprints=blueprints,
            max_turns=max_turns,
            max_parallel=max_parallel,
            beta=beta,
        ),
        **kwargs,
    )
    return vf.load_environment(config)
