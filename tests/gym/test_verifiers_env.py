"""The gym as a verifiers 0.4 environment, run the way verifiers runs it: the env comes up
(`env.serving()`: its interception server), and each task becomes an episode through
`env.run_slot` (what `vf-eval`'s runner does), against a scripted agent behind an
OpenAI-compatible server on localhost (`gym_support.AgentServer`). The searches, the gym and
verifiers are real; only the model is scripted."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from gym_support import AgentServer

from codesearch_core.gym import Episode, Task, as_tasks, seed_blueprints, seed_files

vf = pytest.importorskip("verifiers.v1")
verifiers_env = pytest.importorskip("codesearch_core.gym.verifiers_env")

#: Only a name: verifiers reads the key from an environment variable, the scripted server ignores it.
KEY_VAR = "CODESEARCH_SCRIPTED_AGENT_KEY"


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    """Three seeds: two single-call ones of different corpora and a plan seed (multi-turn)."""
    all_tasks = as_tasks(seed_blueprints()).tasks
    single = [t for t in all_tasks if t.blueprint.plan is None]
    plan = next(t for t in all_tasks if t.blueprint.plan is not None)
    other = next(t for t in single if t.blueprint.corpus != single[0].blueprint.corpus)
    return [single[0], other, plan]


@pytest.fixture(scope="module")
def env() -> Any:
    return verifiers_env.load_environment(blueprints="seeds-all", max_turns=4, max_parallel=8)


def reference_reward(task: Task, turns: list[list[dict[str, Any]]]) -> float:
    """The gym's own reward for replaying `turns` (what the scripted agent will answer)."""
    episode = Episode(task.blueprint, task.corpus_root)
    for turn in turns:
        if episode.step(turn).done:
            break
    return episode.stop().reward


def evaluate(env: Any, server: AgentServer, tasks: list[Task]) -> dict[str, Any]:
    """verifiers' evaluate path over `tasks`: each task's trace, by blueprint id."""
    ids = {t.blueprint.id for t in tasks}
    chosen = [t for t in env.taskset if t.data.id in ids]
    ctx = vf.ModelContext(
        model=server.model,
        client=vf.EvalClientConfig(base_url=server.url, api_key_var=KEY_VAR),
    )

    async def run() -> list[Any]:
        async with env.serving():
            slots = [slot for task in chosen for slot in env.slots(task)]
            return list(await asyncio.gather(*(env.run_slot(s, ctx) for s in slots)))

    episodes = asyncio.run(run())
    assert len(episodes) == len(tasks)
    return {e.task.data.id: e for e in episodes}


@pytest.fixture
def agent(
    monkeypatch: pytest.MonkeyPatch, tasks: list[Task], request: Any
) -> Iterator[AgentServer]:
    monkeypatch.setenv(KEY_VAR, "scripted")
    server = AgentServer(tasks, mode=getattr(request, "param", "reference"))
    yield server
    server.close()


def test_the_rows_are_the_gym_tasks_with_its_prompt(env: Any, tasks: list[Task]) -> None:
    rows = {t.data.id: t for t in env.taskset}
    assert len(rows) == len(as_tasks(seed_blueprints()).tasks)
    plan = tasks[-1]
    row = rows[plan.blueprint.id]
    assert row.data.info["blueprint_id"] == plan.blueprint.id
    assert plan.blueprint.intent in row.data.prompt
    assert "at most 4 turns" in row.data.system_prompt


def test_the_reference_agent_earns_the_gym_reward(
    env: Any, agent: AgentServer, tasks: list[Task]
) -> None:
    episodes = evaluate(env, agent, tasks)
    for task in tasks:
        episode = episodes[task.blueprint.id]
        assert episode.ok, episode.errors
        (trace,) = episode.traces
        expected = reference_reward(task, agent._turns[task.blueprint.intent])
        # A single-call seed is one search turn and a submit: 1.0. A plan seed's reference takes
        # one more turn than the free budget, which the gym charges for (0.95).
        assert expected == (1.0 if task.blueprint.plan is None else 0.95)
        assert trace.reward == pytest.approx(expected)
        assert trace.rewards["episode_reward"].score == pytest.approx(expected)
        assert trace.metrics["R_find"] == 1.0 and trace.metrics["submitted"] == 1.0
        # The recorded metrics ride along as metrics (weight 0): all found, all kept.
        assert trace.metrics["recall"] == 1.0 and trace.metrics["evidence_drop"] == 0.0
        gym = trace.info["gym"]
        assert gym["info"]["end_reason"] == "submitted"
        # Every turn but the last went back to the model as tool messages: the gym's observations.
        shown = [m.content for m in trace.tool_messages]
        played = [c["observation"] for turn in gym["turns"][:-1] for c in turn]
        assert shown == played and shown
        assert gym["turns"][-1][0]["name"] == "submit"
    # One request per assistant turn: all calls of a message went to one gym step.
    assert len(agent.requests) == sum(
        len(e.traces[0].info["gym"]["turns"]) for e in episodes.values()
    )


@pytest.mark.parametrize("agent", ["malformed"], indirect=True)
def test_a_malformed_call_gets_an_error_observation_and_the_rollout_goes_on(
    env: Any, agent: AgentServer, tasks: list[Task]
) -> None:
    episodes = evaluate(env, agent, tasks[:1])
    (trace,) = episodes[tasks[0].blueprint.id].traces
    first = trace.info["gym"]["turns"][0]
    assert first[0]["error"] == "malformed_json"
    assert first[0]["observation"].startswith("error (malformed_json)")
    assert trace.tool_messages[0].content == first[0]["observation"]
    # The rest of the turn ran, and the episode went on to its submit.
    assert trace.info["gym"]["info"]["end_reason"] == "submitted"
    assert trace.metrics["invalid_calls"] == 1.0
    assert trace.reward == pytest.approx(1.0)  # one bad call is within the free call budget


@pytest.mark.parametrize("agent", ["chatty"], indirect=True)
def test_an_answer_without_a_call_ends_the_rollout_with_reward_0(
    env: Any, agent: AgentServer, tasks: list[Task]
) -> None:
    episodes = evaluate(env, agent, tasks[:1])
    episode = episodes[tasks[0].blueprint.id]
    assert episode.ok, episode.errors
    (trace,) = episode.traces
    assert trace.reward == 0.0 and trace.metrics["submitted"] == 0.0
    assert trace.info["gym"]["info"]["end_reason"] == "no_call"
    assert len(agent.requests) == 1  # no second model call after a turn without a call
    assert trace.messages[-1].role == "assistant"
    assert json.dumps(trace.info["gym"])  # the trace's record stays JSON


def test_the_gym_and_the_cli_do_not_import_verifiers() -> None:
    """verifiers is an optional extra: `import codesearch_core.gym` and the CLI must not load it
    (a fresh interpreter, since this test process has imported it)."""
    code = (
        "import sys, codesearch_core.gym, codesearch_core.cli.gym_cmds, codesearch_core.cli; "
        "print('verifiers' in sys.modules, 'openai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize("agent", ["malformed"], indirect=True)
def test_the_gym_limits_hold_over_a_whole_assistant_message(
    agent: AgentServer, tasks: list[Task]
) -> None:
    """All calls of one message go to one gym step: with one call a turn, the second call of the
    scripted agent's first message is refused, not run; with one turn, the plan seed ends after
    its first turn (the turn limit), before its submit."""
    one_call = verifiers_env.load_environment(max_turns=4, max_parallel=1)
    (trace,) = evaluate(one_call, agent, tasks[:1])[tasks[0].blueprint.id].traces
    first = trace.info["gym"]["turns"][0]
    assert [c["error"] for c in first] == ["malformed_json", "too_many_calls"]
    assert [m.content for m in trace.tool_messages[:2]] == [c["observation"] for c in first]

    requests = len(agent.requests)
    one_turn = verifiers_env.load_environment(max_turns=1, max_parallel=8)
    (trace,) = evaluate(one_turn, agent, tasks[-1:])[tasks[-1].blueprint.id].traces
    assert trace.info["gym"]["info"]["end_reason"] == "turn_limit"
    assert trace.reward == 0.0
    assert len(agent.requests) == requests + 1


def test_a_blueprints_file_is_a_taskset_too(tmp_path: Any, tasks: list[Task]) -> None:
    """`blueprints=FILE` reads a blueprints JSONL (here one line of a seed file: the plan seed)."""
    plan_id = tasks[-1].blueprint.id
    lines = [ln for f in seed_files() for ln in f.read_text().splitlines() if plan_id in ln]
    path = tmp_path / "one.jsonl"
    path.write_text(lines[0] + "\n")
    env = verifiers_env.load_environment(blueprints=str(path), max_turns=2)
    (row,) = list(env.taskset)
    assert row.data.id == plan_id and row.data.max_turns == 2
    assert "at most 2 turns" in row.data.system_prompt


def test_beta_reaches_every_row_and_a_bad_one_fails_early() -> None:
    env = verifiers_env.load_environment(blueprints="seeds", beta=0.5)
    rows = list(env.taskset)
    assert rows and {r.data.beta for r in rows} == {0.5}
    with pytest.raises(ValueError, match="beta"):
        verifiers_env.load_environment(beta=0.0)
