"""TRL's way in: the gym as an environment of `GRPOTrainer(environment_factory=...)` (TRL >= 1.16).

    from datasets import Dataset
    from codesearch_core import gym
    from codesearch_core.gym.trl_env import environment_factory, trl_dataset

    tasks = gym.as_tasks(gym.seed_blueprints())
    trainer = GRPOTrainer(model, args=GRPOConfig(..., max_tool_calling_iterations=4),
                          train_dataset=Dataset.from_list(trl_dataset(tasks)),
                          environment_factory=environment_factory(tasks))

This module is plain Python over the gym: it imports neither torch nor trl, so it loads (and is
tested) where they are absent. How TRL 1.16 drives it (`trl/trainer/grpo_trainer.py`):

- Every public function of the class is a tool. Its schema is transformers' `get_json_schema`: the
  signature's type hints and defaults (a parameter without one is required) and the docstring's
  "Args:" section. The docstrings here are written from the gym's own schema (`gym_tools`), so the
  model sees the descriptions it sees everywhere else. Helpers are private or properties for that
  reason (a staticmethod would become a tool too).
- One instance serves one rollout at a time; TRL pools instances and calls `reset(**row)` with
  every column of the dataset row before each rollout: `reset` starts the episode of the row's
  `blueprint_id`. The row's `prompt` (from `trl_dataset`) already holds the episode's messages.
- A generation's tool calls are run before the next generation. For sync tools TRL calls them
  one by one, with nothing to tell where one assistant message ends; async tools of one message
  are created in order and awaited together in one `asyncio.gather`. So the tools are async and
  the calls of one gather are one turn (`_call`): the first call waits one pass of the event loop,
  in which every other call of the gather joins it, then the turn is played with `Episode.step`.
  A turn's limits (`max_parallel` calls, `max_turns` turns) are then the gym's, unchanged.
- `get_reward()` is called once per finished rollout: the episode is stopped (one that never
  submitted scores 0) and its reward returned. TRL logs it as `rewards/CodeSearchToolEnv/mean`;
  `component_rewards` gives reward functions for the components, to log with weight 0. Since the
  environment owns the reward, `reward_funcs` may be left out (TRL 1.16 then needs no other).
- Several task sets in one run (`routed_environments`): TRL takes a dict of factories by name and
  routes each row by its `environment` column, showing each rollout its own environment's tools;
  every route's class is its own, so TRL logs each route's reward as `rewards/<route>/mean`.
- A call reaches the environment with the arguments the model wrote (TRL passes them as keyword
  arguments). Wrong types, missing or unknown arguments all come here (the tool's wrapper takes
  anything) and get the gym's error observation, counted as a call; nothing is raised.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from codesearch_core.gym.actions import READ_FILE, SUBMIT, gym_tools
from codesearch_core.gym.episode import Episode, EpisodeResult
from codesearch_core.gym.prompt import prompt_messages
from codesearch_core.gym.reward import METRICS
from codesearch_core.gym.settings import DEFAULT_SETTINGS, GymSettings
from codesearch_core.gym.tasks import Task, Tasks, as_tasks, seed_blueprints
from codesearch_core.models import ToolName

#: The kind of the error observation of a call made before any `reset`.
NO_EPISODE: Final = "no_episode"

_ToolFn = Callable[..., Coroutine[Any, Any, str]]


def _docstring(name: str) -> str:
    """A Google-style docstring for tool `name` from the gym's schema: its description, then one
    "Args:" line per parameter (an enum as `(choices: [...])`, which `get_json_schema` reads)."""
    (tool,) = [t["function"] for t in gym_tools() if t["function"]["name"] == name]
    lines = [tool["description"], "", "Args:"]
    for arg, prop in tool["parameters"]["properties"].items():
        text = " ".join(str(prop.get("description", arg)).split())
        if "enum" in prop:
            text += " (choices: [" + ", ".join(f'"{v}"' for v in prop["enum"]) + "])"
        lines.append(f"    {arg}: {text}")
    lines += ["", "Returns:", "    What the tool found, or why the call was refused."]
    return "\n".join(lines)


def _tool(stub: _ToolFn) -> _ToolFn:
    """Turn `stub` into a tool: TRL shows the model the stub's signature (`functools.wraps` sets
    `__wrapped__`, which `inspect.signature` follows) and a docstring written from the gym's
    schema, but the wrapper takes whatever the model wrote, so a missing, unknown or mistyped
    argument reaches the gym's check (an error observation) instead of a TypeError in TRL."""
    names = [p for p in inspect.signature(stub).parameters][1:]  # without self

    @functools.wraps(stub)
    async def tool(self: CodeSearchToolEnv, *args: Any, **kwargs: Any) -> str:
        if len(args) > len(names):  # only a direct caller can do this; the gym refuses a list
            return await self._call(stub.__name__, [*args, kwargs])
        arguments = {**dict(zip(names, args, strict=False)), **kwargs}
        # The rendered schema marks optional parameters nullable: null means left out.
        return await self._call(
            stub.__name__, {k: v for k, v in arguments.items() if v is not None}
        )

    tool.__doc__ = _docstring(stub.__name__)
    return tool


@dataclass
class _Turn:
    calls: list[dict[str, Any]] = field(default_factory=list)
    texts: tuple[str, ...] = ()
    played: asyncio.Event = field(default_factory=asyncio.Event)


class CodeSearchToolEnv:
    """One code-search episode per rollout, its tools the gym's (module docstring).

    `tasks` are the blueprints the dataset's rows may name (default: the seed tasks whose corpus
    is here); `log`, when given, receives every finished episode's `EpisodeResult`.
    """

    def __init__(
        self,
        tasks: Tasks | Iterable[Task] | None = None,
        settings: GymSettings = DEFAULT_SETTINGS,
        log: list[EpisodeResult] | None = None,
    ) -> None:
        if tasks is None:
            tasks = _seed_tasks()
        self._tasks = {
            t.blueprint.id: t for t in (tasks.tasks if isinstance(tasks, Tasks) else tasks)
        }
        self._settings = settings
        self._log = log
        self._episode: Episode | None = None
        self._result: EpisodeResult | None = None
        self._turn: _Turn | None = None

    # --- what TRL calls ---------------------------------------------------------------------------

    def reset(self, **row: Any) -> None:
        """Start the episode of the row's `blueprint_id` (TRL passes every column of the row). The
        row's prompt holds the episode's messages already, so nothing is added to it (None)."""
        blueprint_id = row.get("blueprint_id")
        task = self._tasks.get(blueprint_id) if isinstance(blueprint_id, str) else None
        if task is None:  # the dataset's fault, not the model's: fail the run at once
            raise ValueError(
                f"row names blueprint_id {blueprint_id!r}, not one of this environment's "
                f"{len(self._tasks)} tasks"
            )
        self._episode = Episode(task.blueprint, task.corpus_root, self._settings)
        self._result = None
        self._turn = None

    def get_reward(self) -> float:
        """The episode's reward: it is stopped first, so one that never submitted scores 0."""
        result = self._finish()
        return result.reward if result is not None else 0.0

    # The tools. Each stub's signature is the schema the model is shown (what `get_json_schema`
    # reads); its body never runs: `_tool` plays the call in the episode instead.

    @_tool
    async def ripgrep_search(
        self,
        pattern: str,
        file_types: list[str] | None = None,
        globs: list[str] | None = None,
        paths: list[str] | None = None,
        case_sensitive: bool = True,
        smart_case: bool = False,
        fixed_strings: bool = False,
        word: bool = False,
        multiline: bool = False,
        pcre2: bool = False,
        context_lines: int = 0,
    ) -> str:
        raise AssertionError("replaced by _tool")

    @_tool
    async def ast_grep_search(
        self,
        language: str,
        pattern: str | None = None,
        paths: list[str] | None = None,
        rule: dict[str, Any] | None = None,
    ) -> str:
        raise AssertionError("replaced by _tool")

    @_tool
    async def read_file(self, path: str, start_line: int = 1, end_line: int | None = None) -> str:
        raise AssertionError("replaced by _tool")

    @_tool
    async def submit(self, locations: list[dict[str, Any]]) -> str:
        raise AssertionError("replaced by _tool")

    # --- what a trainer's logging reads (properties: TRL makes every public function a tool) ------

    @property
    def episode(self) -> Episode | None:
        return self._episode

    @property
    def result(self) -> EpisodeResult | None:
        """The finished episode (after `get_reward`), with `components` and `info()`."""
        return self._result

    # --- inside -----------------------------------------------------------------------------------

    async def _call(self, name: str, arguments: Any) -> str:
        """Play one call as part of the current turn: the calls of one `asyncio.gather` (all the
        tool calls of one assistant message, in TRL) are one turn of the episode."""
        turn = self._turn
        first = turn is None
        if turn is None:
            turn = self._turn = _Turn()
        index = len(turn.calls)
        turn.calls.append({"name": name, "arguments": arguments})
        if not first:
            await turn.played.wait()
            return turn.texts[index]
        # gather queued every call's task before any ran, and the loop runs ready tasks first in,
        # first out: after one yield every other call of this gather has joined the turn.
        await asyncio.sleep(0)
        self._turn = None
        try:
            turn.texts = await asyncio.to_thread(self._play, turn.calls)
        finally:
            turn.played.set()  # even on a failure: the other calls must not wait forever
        return turn.texts[index]

    def _play(self, calls: list[dict[str, Any]]) -> tuple[str, ...]:
        if self._episode is None:
            message = f"error ({NO_EPISODE}): no episode is running; reset() starts one"
            return tuple(message for _ in calls)
        return tuple(o.text for o in self._episode.step(calls).observations)

    def _finish(self) -> EpisodeResult | None:
        if self._episode is None:
            return None
        if self._result is None:
            self._result = self._episode.stop()
            if self._log is not None:
                self._log.append(self._result)
        return self._result


@functools.cache
def _seed_tasks() -> Tasks:
    return as_tasks(seed_blueprints())


def environment_factory(
    tasks: Tasks | Sequence[Task] | None = None,
    settings: GymSettings = DEFAULT_SETTINGS,
    log: list[EpisodeResult] | None = None,
) -> Callable[[], CodeSearchToolEnv]:
    """What `GRPOTrainer(environment_factory=...)` takes: a callable without arguments that makes
    one environment (TRL makes one per concurrent rollout and reuses them)."""
    if tasks is None:
        tasks = _seed_tasks()
    fixed = tuple(tasks.tasks if isinstance(tasks, Tasks) else tasks)
    return functools.partial(CodeSearchToolEnv, fixed, settings, log)


def trl_dataset(
    tasks: Tasks | Iterable[Task], settings: GymSettings = DEFAULT_SETTINGS
) -> list[dict[str, Any]]:
    """One row per task: `prompt` (the episode's system and user messages) and `blueprint_id`
    (what `reset` starts). `datasets.Dataset.from_list` makes it a dataset."""
    items = tasks.tasks if isinstance(tasks, Tasks) else tasks
    return [
        {"prompt": prompt_messages(t.blueprint, settings), "blueprint_id": t.blueprint.id}
        for t in items
    ]


#: The dataset column TRL 1.16 routes a row by when `environment_factory` is a dict of them.
ROUTE_COLUMN: Final = "environment"
_ROUTE_NAME: Final = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")


def routed_environments(
    routes: Mapping[str, Tasks | Sequence[Task]],
    settings: GymSettings | Mapping[str, GymSettings] = DEFAULT_SETTINGS,
    log: list[EpisodeResult] | None = None,
) -> tuple[dict[str, Callable[[], CodeSearchToolEnv]], list[dict[str, Any]]]:
    """Several task sets in one GRPO run, as TRL 1.16 routes them: `environment_factory` a dict
    of factories by name, each dataset row naming its own in the `environment` column.

    Returns the factories and the rows (`trl_dataset`'s for each route's tasks, in route order,
    with `environment` set). Each route's environment is a subclass of `CodeSearchToolEnv` named
    after the route: TRL gives every environment class with a `get_reward` a reward column of its
    own (scored only on that class's rollouts), so it logs `rewards/<route>/mean` per task set and
    the run needs no `reward_funcs`. `settings` is one for all or one per route (a route it lacks
    takes the defaults); `log` receives every route's finished episodes."""
    if not routes:
        raise ValueError("no route: give at least one task set by name")
    factories: dict[str, Callable[[], CodeSearchToolEnv]] = {}
    rows: list[dict[str, Any]] = []
    for name, tasks in routes.items():
        if not isinstance(name, str) or _ROUTE_NAME.fullmatch(name) is None:
            raise ValueError(
                f"route name {name!r}: a letter, then letters, digits, '_', '.' or '-' (TRL logs "
                "it as rewards/<name>/mean)"
            )
        if name in _COMPONENTS or name == CodeSearchToolEnv.__name__:
            raise ValueError(f"route name {name!r} is already a reward's name in TRL's log")
        chosen = tuple(tasks.tasks if isinstance(tasks, Tasks) else tasks)
        if not chosen:
            raise ValueError(f"route {name!r} has no task")
        own = settings.get(name, DEFAULT_SETTINGS) if isinstance(settings, Mapping) else settings
        # A class per route: TRL keys the reward column by the environment's class name.
        env_class = type(name, (CodeSearchToolEnv,), {"__module__": __name__})
        factories[name] = functools.partial(env_class, chosen, own, log)
        rows += [{**row, ROUTE_COLUMN: name} for row in trl_dataset(chosen, own)]
    return factories, rows


#: The reward's components (`gym.reward`), each a key of `EpisodeResult.components`, then the
#: recorded metrics (`gym.reward.METRICS`), keys of `EpisodeResult.metrics`: logged alike.
_COMPONENTS: Final = (
    "R_submit", "R_find", "R_scope", "R_turns", "R_calls", "R_pcre2_rule", *METRICS
)  # fmt: skip


def component_rewards(names: Sequence[str] = ()) -> list[Callable[..., list[float | None]]]:
    """Reward functions that give one component of each rollout's episode reward (`R_find`, ...)
    or one of its recorded metrics (`precision`, `evidence_drop`, ...; all of both by default), so
    TRL logs each as `rewards/<name>/mean`. Give them weight 0 in `GRPOConfig.reward_weights`: the
    environment's `get_reward` already sums the components, and the metrics are not reward."""
    wanted = list(names) or list(_COMPONENTS)

    def component(name: str) -> Callable[..., list[float | None]]:
        def reward(environments: Sequence[Any] = (), **_: Any) -> list[float | None]:
            values: list[float | None] = []
            for env in environments:
                result = env._finish() if isinstance(env, CodeSearchToolEnv) else None
                recorded = {} if result is None else {**result.metrics, **result.components}
                values.append(recorded.get(name))
            return values

        reward.__name__ = name
        return reward

    return [component(n) for n in wanted]


#: The tools in the order TRL lists them (alphabetical, `inspect.getmembers`); a test checks they
#: are the gym's.
TRL_TOOL_NAMES: Final = tuple(sorted((*(t.value for t in ToolName), READ_FILE, SUBMIT)))


async def _gather(env: CodeSearchToolEnv, calls: Sequence[Any]) -> list[str]:
    coros: list[Coroutine[Any, Any, str]] = []
    for call in calls:
        method = getattr(env, str(call.get("name")), None)
        if call.get("name") not in TRL_TOOL_NAMES or method is None:
            raise ValueError(f"not a tool of the environment: {call.get('name')!r}")
        coros.append(method(**dict(call.get("arguments") or {})))
    return list(await asyncio.gather(*coros))


def play_turn(env: CodeSearchToolEnv, calls: Sequence[dict[str, Any]]) -> list[str]:
    """Play `calls` (`{"name", "arguments"}` each) as one assistant message, as TRL does: the
    tools' coroutines awaited together. Outside a running event loop (tests, scripts)."""
    return asyncio.run(_gather(env, calls))


def search_tools(settings: GymSettings = DEFAULT_SETTINGS) -> list[_ToolFn]:
    """The two search tools as `GRPOTrainer(tools=...)` takes them, for single-call GRPO (the
    `hf-prompts` export and `CodeSearchReward`): TRL renders their schemas into the prompt, which
    it does not do for a dataset's `tools` column. Give `max_tool_calling_iterations=0` so TRL
    never runs them (the completion's call is the reward's to run and grade); run anyway, they
    answer that no episode is running."""
    env = CodeSearchToolEnv((), settings)
    return [env.ast_grep_search, env.ripgrep_search]
