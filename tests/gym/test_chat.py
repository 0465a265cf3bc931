"""The chat policy: an episode played as a conversation with a chat model, against a real
OpenAI-compatible server on localhost whose scripted agent replays the reference episode
(`gym_support.AgentServer`), the real gym and real searches; `codesearch eval --agent` with the
openai engine end to end, and with vLLM (the CPU build, a tiny random model) once.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from gym_support import AgentServer, reference_turns

from codesearch_core.cli import main
from codesearch_core.engines import OpenAIEngine, OpenAISettings, SamplingSettings, get_tool_format
from codesearch_core.errors import EngineError
from codesearch_core.gym import (
    TOOL_NAMES,
    ChatPolicy,
    EndReason,
    OpenAIChat,
    Refusal,
    Task,
    VllmChat,
    as_tasks,
    evaluate_agent,
    gym_tools,
    play,
    rollouts,
    seed_blueprints,
    seed_files,
)
from codesearch_core.gym.chat_calls import text_calls
from codesearch_core.store import Store
from tests.vllm_support.env import skip_reason, tiny_model_dir, vllm_python

#: Two single-call seeds and a plan seed (three turns: two searches, then the submit).
SEEDS = ("webshop-useeffect-calls-tsx", "webshop-todo-fixme-comments",
         "datapipe-plan-users-sql-select-star")  # fmt: skip
PLAN_SEED = SEEDS[2]


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    chosen = as_tasks(bp for bp in seed_blueprints() if bp.id in SEEDS)
    assert len(chosen.tasks) == len(SEEDS), chosen.missing
    return list(chosen.tasks)


@contextmanager
def served(tasks: list[Task], mode: str) -> Iterator[AgentServer]:
    server = AgentServer(tasks, mode=mode)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def reference_server(tasks: list[Task]) -> Iterator[AgentServer]:
    with served(tasks, "reference") as server:
        yield server


def chat_policy(server: AgentServer, model: str = "scripted-agent") -> ChatPolicy:
    engine = OpenAIEngine(OpenAISettings(base_urls=(server.url,), model=model))
    return ChatPolicy(OpenAIChat(engine, SamplingSettings(temperature=0.0, seed=3)))


def test_a_scripted_agent_over_http_solves_every_task_plan_seed_included(
    tasks: list[Task], reference_server: AgentServer
) -> None:
    policy = chat_policy(reference_server)
    try:
        results = {t.blueprint.id: play(policy, t) for t in tasks}
    finally:
        policy.close()
    assert all(r.success for r in results.values()), {k: r.info() for k, r in results.items()}
    assert all(r.end_reason == EndReason.SUBMITTED for r in results.values())
    assert len(results[PLAN_SEED].turns) == 3  # a multi-turn episode, one request a turn
    assert results[SEEDS[0]].reward == 1.0
    assert policy.failures == []
    # What the server was asked: the gym's four tools, parallel calls allowed, and each turn's
    # observations back as tool messages answering the ids of the calls they observe.
    first = reference_server.requests[0]
    assert first["tools"] == gym_tools()
    assert sorted(t["function"]["name"] for t in first["tools"]) == sorted(TOOL_NAMES)
    assert first["parallel_tool_calls"] is True and first["tool_choice"] == "auto"
    assert (first["temperature"], first["seed"], first["model"]) == (0.0, 3, "scripted-agent")
    later = [r for r in reference_server.requests if len(r["messages"]) > 2]
    assert later
    for request in later:
        messages = request["messages"]
        for i, m in enumerate(messages):
            if m["role"] == "assistant":
                ids = [c["id"] for c in m["tool_calls"]]
                answers = messages[i + 1 : i + 1 + len(ids)]
                assert [a["tool_call_id"] for a in answers] == ids
                assert all(a["role"] == "tool" and a["content"] for a in answers)


def test_a_malformed_call_is_refused_in_the_episode_and_the_agent_still_succeeds(
    tasks: list[Task],
) -> None:
    with served(tasks, "malformed") as server:
        policy = chat_policy(server)
        result = play(policy, tasks[0])
        policy.close()
    first_turn = result.turns[0]
    assert first_turn[0].error == Refusal.MALFORMED_JSON
    assert first_turn[0].text.startswith("error (malformed_json): the arguments are not JSON")
    assert result.invalid_calls == 1 and result.calls == 2  # the refused call counts
    assert result.success and result.end_reason == EndReason.SUBMITTED


def test_an_answer_without_a_call_ends_the_episode_unsubmitted(tasks: list[Task]) -> None:
    with served(tasks, "chatty") as server:
        policy = chat_policy(server)
        run = evaluate_agent(policy, tasks[:2], label="chatty")
        policy.close()
        assert len(server.requests) == 2  # one answer each, then nothing more is asked
    assert run.summary["overall"]["success_rate"] == 0.0
    assert run.summary["overall"]["submit_rate"] == 0.0
    for item in run.items:
        (answer,) = item.answers
        assert answer.reward == 0.0 and answer.call is None
        assert answer.error == f"never submitted ({EndReason.NO_CALL})"


def test_a_server_gone_in_the_middle_of_a_run_ends_it_with_a_clear_error(
    tasks: list[Task],
) -> None:
    with served(tasks, "reference") as server:
        engine = OpenAIEngine(OpenAISettings(base_urls=(server.url,), model="scripted-agent",
                                             max_attempts=1))  # fmt: skip
        policy = ChatPolicy(OpenAIChat(engine, SamplingSettings()))
    try:  # the server is gone now: no episode can be played, and none is scored 0 for it
        with pytest.raises(EngineError, match=r"cannot reach .* is `vllm serve` running there"):
            evaluate_agent(policy, tasks, workers=1)
    finally:
        policy.close()


class ScriptedVllm:
    """Stands in for the vLLM engine (`VllmChat` calls its `_chat` as it calls vLLM's): replays
    each task's reference episode as Hermes text, one `<tool_call>` block a call; refuses the
    conversations of `refuse` (as vLLM refuses a prompt past its context)."""

    def __init__(self, tasks: list[Task], refuse: str = "", broken: bool = False) -> None:
        self.model = "scripted-vllm"
        self.settings = SimpleNamespace(format=get_tool_format("hermes"))
        # The tiny Qwen2 model's template shows the tools: its own template, not the project's.
        self.tool_format, self.tool_template = self.settings.format, False
        self.turns = {t.blueprint.intent: reference_turns(t) for t in tasks}
        self.refuse, self.broken = refuse, broken
        self.batches: list[tuple[int, list[str]]] = []

    def chat_arguments(self) -> dict[str, Any]:
        return {"tools": ["the engine's two single-call tools"]}

    def chat_batch(self, conversations: list[Any], todo: list[int], params: Any,
              chat: dict[str, Any], failed: dict[int, str]) -> dict[int, Any]:  # fmt: skip
        if self.broken:
            raise EngineError("vLLM generation failed: RuntimeError: the engine core died")
        self.batches.append((len(todo), [t["function"]["name"] for t in chat["tools"]]))
        outputs = {}
        for i in todo:
            user = conversations[i][1]["content"]
            if self.refuse and self.refuse in user:
                failed[i] = "vLLM refused the prompt: the prompt is longer than the context"
                continue
            turns = next(t for intent, t in self.turns.items() if intent in user)
            k = sum(m["role"] == "assistant" for m in conversations[i])
            text = "".join(f"<tool_call>\n{json.dumps(c)}\n</tool_call>" for c in turns[k])
            outputs[i] = SimpleNamespace(outputs=[SimpleNamespace(text=text)])
        return outputs


def test_vllm_turns_are_read_from_the_models_text_and_a_refused_prompt_stops_its_episode(
    tasks: list[Task],
) -> None:
    engine = ScriptedVllm(tasks, refuse=tasks[1].blueprint.intent)
    policy = ChatPolicy(VllmChat(cast(Any, engine), SamplingSettings(), sampling_params="p"))
    try:
        run = evaluate_agent(policy, tasks, workers=3)
    finally:
        policy.close()
    infos = {i.blueprint_id: json.loads(i.answers[0].raw_text)["info"] for i in run.items}
    assert infos[SEEDS[0]]["end_reason"] == infos[PLAN_SEED]["end_reason"] == "submitted"
    assert run.items[0].answers[0].reward == 1.0
    assert infos[SEEDS[1]]["end_reason"] == EndReason.STOPPED and infos[SEEDS[1]]["turns"] == 0
    assert policy.stopped == 1 and "longer than the context" in policy.failures[0]
    # Every turn of every episode went through the engine, with the gym's tools, not its own.
    assert sum(n for n, _ in engine.batches) == 2 + 3 + 1  # two episodes' turns, one refusal
    assert all(names == [t["function"]["name"] for t in gym_tools()] for _, names in engine.batches)
    broken = ChatPolicy(VllmChat(cast(Any, ScriptedVllm(tasks, broken=True)), SamplingSettings(),
                                 sampling_params="p"))  # fmt: skip
    try:  # a batch that fails is every waiting episode's error: none hangs, none scores 0
        with pytest.raises(EngineError, match="the engine core died"):
            evaluate_agent(broken, tasks, workers=3)
    finally:
        broken.close()


def test_model_text_is_read_as_every_call_it_writes_and_a_broken_one_is_still_a_call() -> None:
    hermes = get_tool_format("hermes")
    text = ('I will search.\n<tool_call>\n{"name": "ripgrep_search", "arguments": {"pattern": "a"}}'
            '\n</tool_call>\n<tool_call>\n{"name": "read_file", "arguments": {"path": "x.py"}}\n'
            '</tool_call>\n<tool_call>\n{"name": "submit", "arguments": {locations: [')  # fmt: skip
    calls = text_calls(text, hermes, turn=2)
    assert [c["function"]["name"] for c in calls] == ["ripgrep_search", "read_file", "submit"]
    assert calls[0]["function"]["arguments"] == {"pattern": "a"}
    assert calls[2]["function"]["arguments"].startswith('\n{"name": "submit"')  # as written
    assert [c["id"] for c in calls] == ["call_2_0", "call_2_1", "call_2_2"]
    assert text_calls("The answer is in src/app.py.", hermes, turn=0) == []
    assert text_calls("", hermes, turn=0) == []
    (empty,) = text_calls("<tool_call>\n</tool_call>", hermes, turn=0)
    assert empty["function"]["name"] is None  # refused as malformed, never dropped
    xlam = text_calls('[{"name": "submit", "arguments": {"locations": []}}, {"name": "x"}]',
                      get_tool_format("xlam"), turn=0)  # fmt: skip
    assert [c["function"]["name"] for c in xlam] == ["submit", "x"]
    (llama,) = text_calls('{"name": "read_file", "parameters": {"path": "a"}}',
                          get_tool_format("llama3_json"), turn=0)  # fmt: skip
    assert llama["function"]["arguments"] == {"path": "a"}


def seeds_file(path: Path, ids: tuple[str, ...]) -> Path:
    lines = [line for f in seed_files() for line in f.read_text(encoding="utf-8").splitlines()
             if line.strip() and json.loads(line)["id"] in ids]  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_eval_agent_with_the_openai_engine_stores_the_run_and_prints_the_summary(
    tmp_path: Path, tasks: list[Task], reference_server: AgentServer,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    db = tmp_path / "s.duckdb"
    blueprints = seeds_file(tmp_path / "bps.jsonl", SEEDS)
    args = ["eval", "--agent", "--engine", "openai", "--base-url", reference_server.url,
            "--model", "scripted-agent", "--blueprints", str(blueprints), "--db", str(db)]  # fmt: skip
    assert main(args) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "agent eval run" in out and "(agent:openai:scripted-agent, n=1," in out
    assert "success_rate       1.0" in out
    with Store(db) as store:
        (listed,) = store.evals.list()
        run = store.evals.get(listed.run_id)
    assert run is not None and (run.engine, run.model) == ("agent:openai", "scripted-agent")
    assert run.summary["agent"] is True
    assert run.summary["overall"]["episodes"] == len(SEEDS)
    assert run.summary["overall"]["success_rate"] == 1.0
    trajectory = json.loads(next(i for i in run.items if i.blueprint_id == PLAN_SEED)
                            .answers[0].raw_text)  # fmt: skip
    assert len(trajectory["turns"]) == 3 and trajectory["info"]["end_reason"] == "submitted"


def test_eval_agent_with_a_server_that_is_down_or_lacks_the_model_fails_before_any_episode(
    tmp_path: Path, reference_server: AgentServer, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.duckdb"
    blueprints = seeds_file(tmp_path / "bps.jsonl", SEEDS[:1])
    base = ["eval", "--agent", "--engine", "openai", "--blueprints", str(blueprints),
            "--db", str(db)]  # fmt: skip
    down = f"http://127.0.0.1:{free_port()}/v1"
    assert main([*base, "--base-url", down, "--model", "scripted-agent"]) == 2
    assert f"cannot reach {down}/models" in capsys.readouterr().err
    assert main([*base, "--base-url", reference_server.url, "--model", "other-7b"]) == 2
    assert "serves scripted-agent, not 'other-7b'" in capsys.readouterr().err
    assert reference_server.requests == []  # no episode began
    assert not db.exists()


#: ChatML without the tool schemas: the tiny model's context (2,048) cannot hold the gym's four
#: tools as its byte-level tokenizer writes them (2,049+ tokens: every request would be refused
#: and each episode stopped before its first turn, which is not what this test is about).
SHORT_CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] or '' }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@pytest.mark.vllm
@pytest.mark.skipif(vllm_python() is None, reason=skip_reason())
def test_eval_agent_with_vllm_plays_a_tiny_random_model_to_the_end_of_each_episode(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    from tests.engines.test_engines_vllm import bare_env, run_cli

    model = tiny_model_dir(tmp_path_factory)
    db = tmp_path / "s.duckdb"
    blueprints = seeds_file(tmp_path / "bps.jsonl", SEEDS[:2])
    template = tmp_path / "chatml.jinja"
    template.write_text(SHORT_CHATML, encoding="utf-8")
    proc = run_cli(["eval", "--agent", "--engine", "vllm", "--model", str(model),
                    "--max-model-len", "2048", "--max-tokens", "48", "--max-turns", "2",
                    "--chat-template", str(template), "--blueprints", str(blueprints),
                    # The short template shows no tools; kept as it is (the project's tool
                    # template would put them in the prompt, past the tiny model's context).
                    "--tool-template", "model",
                    "--db", str(db), "--json"], bare_env())  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "Traceback" not in proc.stderr
    assert "stopped by a failed request" not in proc.stderr, proc.stderr[-2000:]
    summary: dict[str, Any] = json.loads(proc.stdout[proc.stdout.index("{\n") :])
    overall = summary["overall"]
    assert overall["episodes"] == 2 and overall["success_rate"] == 0.0
    assert overall["mean_turns"] >= 1.0, overall  # the model was asked, and answered
    assert "invalid_call_rate" in overall and "mean_calls" in overall
    with Store(db) as store:
        (listed,) = store.evals.list()
        run = store.evals.get(listed.run_id)
    assert run is not None and (run.engine, run.model) == ("agent:vllm", str(model))
    infos = [json.loads(i.answers[0].raw_text)["info"] for i in run.items]
    # Junk is prose (no call: `no_call`) or, by chance, calls the environment refuses.
    assert {i["end_reason"] for i in infos} <= {"no_call", "turn_limit"}, infos


def test_rollouts_of_a_served_model_keep_its_sampling_settings(
    tasks: list[Task], reference_server: AgentServer, tmp_path: Path
) -> None:
    policy = chat_policy(reference_server)
    try:
        with Store(tmp_path / "studio.duckdb") as store:
            assert rollouts(policy, tasks[:1], store).kept == 1
            [episode] = store.episodes.list()
    finally:
        policy.close()
    assert (episode.engine, episode.model) == ("openai", "scripted-agent")
    assert episode.sampling == {"temperature": 0.0, "top_p": 0.95, "max_tokens": 512, "seed": 3}
