"""The TRL environment (`gym.trl_env`) without TRL: its tools, turns, reward and hostile arguments.

The run under the real `GRPOTrainer` is `test_trl_grpo.py` (the vLLM venv, where torch is).
"""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

import pytest

from codesearch_core import gym
from codesearch_core.gym.trl_env import (
    NO_EPISODE,
    TRL_TOOL_NAMES,
    CodeSearchToolEnv,
    component_rewards,
    environment_factory,
    play_turn,
    routed_environments,
    trl_dataset,
)

#: Four seed blueprints on the fixture corpora whose reference scores 1.0 (the GRPO test's too).
SIMPLE = (
    "webshop-useeffect-calls-tsx",
    "webshop-todo-fixme-comments",
    "webshop-password-equals-user-backreference",
    "webshop-async-functions-calling-db-query",
)
PLAN = "datapipe-plan-users-sql-select-star"


@pytest.fixture(scope="module")
def tasks() -> dict[str, gym.Task]:
    found = gym.as_tasks(gym.seed_blueprints())
    return {t.blueprint.id: t for t in found.tasks}


def started(tasks: dict[str, gym.Task], blueprint_id: str) -> CodeSearchToolEnv:
    env = CodeSearchToolEnv(list(tasks.values()))
    (row,) = trl_dataset([tasks[blueprint_id]])
    env.reset(**row)
    return env


def test_the_public_functions_are_the_gym_tools_with_its_parameters() -> None:
    # TRL makes every public function of the class a tool (but reset and get_reward).
    public = {
        name
        for name, _ in inspect.getmembers(CodeSearchToolEnv, predicate=inspect.isfunction)
        if not name.startswith("_") and name not in {"reset", "get_reward"}
    }
    assert sorted(public) == list(TRL_TOOL_NAMES) == sorted(gym.TOOL_NAMES)
    env = CodeSearchToolEnv([])
    for tool in gym.gym_tools():
        fn = tool["function"]
        method = getattr(env, fn["name"])
        assert inspect.iscoroutinefunction(method)  # so TRL gathers a message's calls (one turn)
        params = inspect.signature(method).parameters  # what get_json_schema reads
        assert set(params) == set(fn["parameters"]["properties"])
        required = {n for n, p in params.items() if p.default is inspect.Parameter.empty}
        assert required == set(fn["parameters"].get("required", []))
        doc = method.__doc__ or ""
        assert doc.startswith(fn["description"]) and "\nArgs:\n" in doc
        assert all(f"\n    {name}: " in doc for name in params)


@pytest.mark.parametrize("blueprint_id", [*SIMPLE, PLAN])
def test_the_reference_calls_earn_what_they_earn_in_the_gym(
    tasks: dict[str, gym.Task], blueprint_id: str
) -> None:
    reference = gym.play(gym.ReferencePolicy(), tasks[blueprint_id])
    log: list[gym.EpisodeResult] = []
    env = environment_factory(list(tasks.values()), log=log)()
    env.reset(**trl_dataset([tasks[blueprint_id]])[0])
    for turn in reference.turns:
        texts = play_turn(env, [o.call.to_dict() for o in turn])
        assert texts == [o.text for o in turn]
    assert env.get_reward() == reference.reward
    assert reference.reward == (1.0 if blueprint_id in SIMPLE else 0.95)  # a plan's third turn
    assert log == [env.result]
    assert env.result is not None and env.result.to_dict() == reference.to_dict()


def test_the_calls_of_one_gather_are_one_turn_and_awaits_one_by_one_are_turns_each(
    tasks: dict[str, gym.Task],
) -> None:
    env = started(tasks, SIMPLE[0])
    search = {"pattern": "useEffect", "file_types": ["ts"]}
    texts = play_turn(env, [{"name": "ripgrep_search", "arguments": search}] * 3)
    assert len(set(texts)) == 1 and "useEffect" in texts[0]

    async def one_by_one() -> None:
        await env.ripgrep_search(**search)
        await env.read_file(path="src/web/components/Cart.tsx", end_line=3)

    asyncio.run(one_by_one())
    assert env.get_reward() == 0.0
    result = env.result
    assert result is not None
    assert [len(t) for t in result.turns] == [3, 1, 1]
    assert (result.calls, result.end_reason) == (5, gym.EndReason.STOPPED)


def test_a_turn_past_the_parallel_limit_is_refused_by_the_gym(tasks: dict[str, gym.Task]) -> None:
    env = CodeSearchToolEnv(list(tasks.values()), gym.GymSettings(max_parallel=2))
    env.reset(blueprint_id=SIMPLE[0])
    texts = play_turn(env, [{"name": "read_file", "arguments": {"path": "package.json"}}] * 3)
    assert texts[2].startswith(f"error ({gym.Refusal.TOO_MANY_CALLS})")
    assert not texts[0].startswith("error")


@pytest.mark.parametrize(
    ("call", "kind"),
    [
        ({"name": "read_file", "arguments": {}}, gym.Refusal.INVALID_ARGUMENTS),  # missing path
        ({"name": "read_file", "arguments": {"path": 7}}, gym.Refusal.INVALID_ARGUMENTS),
        (
            {"name": "read_file", "arguments": {"path": "a.py", "start_line": "ten"}},
            gym.Refusal.INVALID_ARGUMENTS,
        ),
        ({"name": "read_file", "arguments": {"file": "a.py"}}, gym.Refusal.INVALID_ARGUMENTS),
        (
            {"name": "ripgrep_search", "arguments": {"pattern": ["x"]}},
            gym.Refusal.INVALID_ARGUMENTS,
        ),
        (
            {"name": "ripgrep_search", "arguments": {"context_lines": 99}},
            gym.Refusal.INVALID_ARGUMENTS,
        ),
        (
            {"name": "ast_grep_search", "arguments": {"pattern": "f($A)"}},
            gym.Refusal.INVALID_ARGUMENTS,
        ),
        (
            {"name": "submit", "arguments": {"locations": "src/a.py:1"}},
            gym.Refusal.INVALID_ARGUMENTS,
        ),
        (
            {"name": "submit", "arguments": {"locations": [{"path": "a"}]}},
            gym.Refusal.INVALID_ARGUMENTS,
        ),
        ({"name": "submit", "arguments": {}}, gym.Refusal.INVALID_ARGUMENTS),
        ({"name": "read_file", "arguments": {"path": "../../etc/passwd"}}, "path_outside_corpus"),
    ],
)
def test_malformed_arguments_answer_an_error_observation(
    tasks: dict[str, gym.Task], call: dict[str, object], kind: str
) -> None:
    # TRL calls the tool with the arguments the model wrote, as keyword arguments.
    env = started(tasks, SIMPLE[0])
    (text,) = play_turn(env, [call])
    assert text.startswith(f"error ({kind}): ")
    assert env.get_reward() == 0.0
    assert env.result is not None
    assert (env.result.calls, env.result.invalid_calls) == (1, 1)


def test_positional_arguments_bind_to_the_schema_and_too_many_are_refused(
    tasks: dict[str, gym.Task],
) -> None:
    env = started(tasks, SIMPLE[0])

    async def calls() -> list[str]:
        return list(
            await asyncio.gather(
                env.read_file("src/web/components/Cart.tsx", 1, 2),
                env.read_file("src/web/components/Cart.tsx", 1, 2, 3),
            )
        )

    read, refused = asyncio.run(calls())
    assert not read.startswith("error") and read.count("\n") <= 2
    assert refused.startswith(f"error ({gym.Refusal.INVALID_ARGUMENTS})")


def test_without_reset_a_call_is_an_error_and_the_reward_0(tasks: dict[str, gym.Task]) -> None:
    env = CodeSearchToolEnv(list(tasks.values()))
    (text,) = play_turn(env, [{"name": "submit", "arguments": {"locations": []}}])
    assert text.startswith(f"error ({NO_EPISODE})")
    assert env.get_reward() == 0.0 and env.result is None


def test_a_row_naming_an_unknown_blueprint_fails_the_reset(tasks: dict[str, gym.Task]) -> None:
    with pytest.raises(ValueError, match="not one of"):
        CodeSearchToolEnv(list(tasks.values())).reset(prompt=[], blueprint_id="nope")


def test_reset_starts_a_new_episode_and_each_is_logged_once(tasks: dict[str, gym.Task]) -> None:
    log: list[gym.EpisodeResult] = []
    env = CodeSearchToolEnv(list(tasks.values()), log=log)
    for blueprint_id in SIMPLE[:2]:
        env.reset(blueprint_id=blueprint_id)
        play_turn(env, [{"name": "submit", "arguments": {"locations": []}}])
        assert env.get_reward() == env.get_reward()  # a second read does not log it again
    assert [r.blueprint_id for r in log] == list(SIMPLE[:2])
    assert all(r.end_reason == gym.EndReason.SUBMITTED for r in log)


def test_component_rewards_read_the_episode(tasks: dict[str, gym.Task]) -> None:
    env = started(tasks, SIMPLE[0])
    reference = gym.play(gym.ReferencePolicy(), tasks[SIMPLE[0]])
    for turn in reference.turns:
        play_turn(env, [o.call.to_dict() for o in turn])
    funcs = component_rewards()
    values = {f.__name__: f(environments=[env, object()]) for f in funcs}
    recorded = {**reference.components, **reference.metrics}  # the metrics are logged alike
    assert values == {name: [value, None] for name, value in recorded.items()}


def test_trl_dataset_rows_hold_the_prompt_and_the_blueprint(tasks: dict[str, gym.Task]) -> None:
    rows = trl_dataset([tasks[b] for b in SIMPLE])
    assert [r["blueprint_id"] for r in rows] == list(SIMPLE)
    assert rows[0]["prompt"] == gym.prompt_messages(
        tasks[SIMPLE[0]].blueprint, gym.DEFAULT_SETTINGS
    )


def test_the_docs_snippet_is_the_one_the_grpo_test_runs() -> None:
    # docs/gym_trl.md says it shows the code test_trl_grpo.py runs; this keeps that true.
    repo = Path(__file__).resolve().parents[2]
    doc = (repo / "docs" / "gym_trl.md").read_text(encoding="utf-8")
    block = doc.split("```python\n", 1)[1].split("```", 1)[0]
    test = (repo / "tests" / "gym" / "test_trl_grpo.py").read_text(encoding="utf-8")
    ran = test.split("# --- docs/gym_trl.md: begin\n", 1)[1].split("# --- docs/gym_trl.md: end", 1)[
        0
    ]
    assert block == ran + "trainer.train()\n"


def test_routed_environments_give_each_route_its_class_its_tasks_and_its_rows(
    tasks: dict[str, gym.Task],
) -> None:
    episodes: list[gym.EpisodeResult] = []
    plan_settings = gym.GymSettings(max_turns=6)
    factories, rows = routed_environments(
        {"search": [tasks[b] for b in SIMPLE[:2]], "plan": [tasks[PLAN]]},
        settings={"plan": plan_settings},
        log=episodes,
    )
    assert list(factories) == ["search", "plan"]
    assert [(r["environment"], r["blueprint_id"]) for r in rows] == [
        ("search", SIMPLE[0]),
        ("search", SIMPLE[1]),
        ("plan", PLAN),
    ]
    # TRL names a get_reward column after the environment's class: one per route.
    search, plan = factories["search"](), factories["plan"]()
    assert (type(search).__name__, type(plan).__name__) == ("search", "plan")
    assert isinstance(plan, CodeSearchToolEnv) and type(search) is not type(plan)
    assert rows[2]["prompt"] == gym.prompt_messages(tasks[PLAN].blueprint, plan_settings)
    # The row TRL routes to a route resets its environment; another route's row is refused there.
    plan.reset(**rows[2])
    reference = gym.play(gym.ReferencePolicy(), tasks[PLAN], plan_settings)
    for turn in reference.turns:
        play_turn(plan, [o.call.to_dict() for o in turn])
    assert plan.get_reward() == reference.reward and [e.blueprint_id for e in episodes] == [PLAN]
    with pytest.raises(ValueError, match=SIMPLE[0]):
        plan.reset(**rows[0])
    # The component rewards read every route's environments.
    (find,) = component_rewards(["R_find"])
    assert find(environments=[plan]) == [reference.components["R_find"]]


@pytest.mark.parametrize(
    ("routes", "says"),
    [
        ({}, "no route"),
        ({"": [PLAN]}, "route name"),
        ({"a b": [PLAN]}, "route name"),
        ({"R_find": [PLAN]}, "already a reward"),
        ({"plan": []}, "has no task"),
    ],
)
def test_routed_environments_refuse_bad_routes(
    tasks: dict[str, gym.Task], routes: dict[str, list[str]], says: str
) -> None:
    with pytest.raises(ValueError, match=says):
        routed_environments({k: [tasks[b] for b in v] for k, v in routes.items()})


def test_the_docs_routed_example_is_the_one_the_grpo_test_runs() -> None:
    repo = Path(__file__).resolve().parents[2]
    doc = (repo / "docs" / "gym_trl.md").read_text(encoding="utf-8")
    test = (repo / "tests" / "gym" / "test_trl_grpo.py").read_text(encoding="utf-8")
    ran = test.split("# --- docs/gym_trl.md routed: begin\n", 1)[1].split(
        "# --- docs/gym_trl.md routed: end", 1
    )[0]
    assert ran + "trainer.train()\n```" in doc
