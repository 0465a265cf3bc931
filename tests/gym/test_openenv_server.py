"""The gym's OpenEnv server, for real: `codesearch gym serve` in a child process on a free port,
driven by OpenEnv's own WebSocket client (`EnvClient`, typed as `CodeSearchEnvClient`) and by plain
HTTP sessions (`/session/*`, httpx), running the real rg / ast-grep; `openenv validate` checks the
running server. A scripted policy stands in for a model: the blueprint's reference call, then a
submit of its expected spans.

Two servers start at once for the whole module (importing OpenEnv takes its seconds in each: it
brings Gradio and FastMCP): one with a token, which the clients send, and one without, which the
shutdown test stops with SIGTERM. The test process imports OpenEnv's client only once they are
starting, so the three imports overlap.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from websockets.sync.client import connect as ws_connect

from codesearch_core.cli import build_parser, main
from codesearch_core.cli.gym_cmds import server_settings_from
from codesearch_core.gym import (
    Episode,
    ServerSettings,
    Task,
    as_tasks,
    is_loopback,
    seed_blueprints,
)

if TYPE_CHECKING:
    from codesearch_core.gym.openenv_server import CodeSearchAction

REPO = Path(__file__).resolve().parents[2]
TOKEN = "test-token-4f1c"
#: Hang guards, not timings: a server that has not started or stopped by then is broken.
START_S = 300
STOP_S = 60


class Served:
    """`codesearch gym serve --port 0` in its own session (so what it spawns can be found)."""

    def __init__(self, *args: str, token: str = "") -> None:
        env = {**os.environ, "CODESEARCH_GYM_TOKEN": token}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "codesearch_core", "gym", "serve", "--port", "0", *args],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            start_new_session=True,
        )  # fmt: skip
        self.lines: list[str] = []
        self.url = ""
        self._ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            if "listening on " in line:
                self.url = line.split("listening on ", 1)[1].split()[0]
                self._ready.set()
        self._ready.set()  # it exited

    def ready(self) -> Served:
        assert self._ready.wait(START_S) and self.url, "".join(self.lines)
        return self

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(STOP_S)


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, Served]]:
    started = {"token": Served(token=TOKEN), "plain": Served()}
    try:
        # OpenEnv's client, imported while the servers import OpenEnv too (seconds each).
        importlib.import_module("codesearch_core.gym.openenv_client")
        yield started
    finally:
        for s in started.values():
            if s.proc.poll() is None:
                s.proc.kill()
                s.proc.wait(STOP_S)


@pytest.fixture(scope="module")
def url(servers: dict[str, Served]) -> str:
    return servers["token"].ready().url


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    """The single-call seeds (a plan seed's reference is several turns)."""
    return [t for t in as_tasks(seed_blueprints()).tasks if t.blueprint.plan is None]


def client(url: str, token: str = TOKEN) -> Any:
    # Imported here, not at the top: OpenEnv's import (seconds) then overlaps the servers' start.
    from codesearch_core.gym.openenv_client import CodeSearchEnvClient

    return CodeSearchEnvClient(url, token=token).sync()


def action(calls: Any) -> CodeSearchAction:
    from codesearch_core.gym.openenv_server import CodeSearchAction

    return CodeSearchAction(calls=calls)


def ws(url: str) -> Any:
    """A bare WebSocket session: to send what OpenEnv's client never would, and to drop it."""
    return ws_connect(f"{url.replace('http', 'ws', 1)}/ws",
                      additional_headers={"Authorization": f"Bearer {TOKEN}"})  # fmt: skip


def http(url: str, token: str = TOKEN) -> httpx.Client:
    """A plain-HTTP client of the server (kept-alive connections, as a trainer's would be)."""
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=START_S)


def http_reset(client: httpx.Client, **body: Any) -> dict[str, Any]:
    answer = client.post("/session/reset", json=body)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def http_step(client: httpx.Client, sid: str, action: CodeSearchAction) -> dict[str, Any]:
    answer = client.post("/session/step", json={"session_id": sid, "action": action.model_dump()})
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def http_state(client: httpx.Client, sid: str) -> dict[str, Any]:
    return dict(client.get("/session/state", params={"session_id": sid}).json())


def reference(task: Task) -> CodeSearchAction:
    return action([task.blueprint.reference_call.to_dict()])


def submit(task: Task | None) -> CodeSearchAction:
    spans = [s.to_dict() for s in task.blueprint.expected] if task is not None else []
    return action([{"name": "submit", "arguments": {"locations": spans}}])


def in_process_text(task: Task) -> str:
    """What the same call shows in an episode run here (episodes are deterministic)."""
    episode = Episode(task.blueprint, task.corpus_root)
    return episode.step(reference(task).calls).observations[0].text


def in_process_reward(task: Task, *actions: CodeSearchAction) -> float:
    episode = Episode(task.blueprint, task.corpus_root)
    for action in actions:
        episode.step(action.calls)
    return episode.result().reward


# --- an episode --------------------------------------------------------------------------------


def test_a_reference_episode_over_openenvs_client_earns_1(url: str, tasks: list[Task]) -> None:
    task = tasks[0]
    with client(url) as env:
        first = env.reset(blueprint_id=task.blueprint.id)
        assert not first.done and first.reward is None
        assert first.observation.blueprint_id == task.blueprint.id
        assert [m["role"] for m in first.observation.messages] == ["system", "user"]
        assert task.blueprint.intent in first.observation.messages[1]["content"]
        names = [t["function"]["name"] for t in first.observation.tools]
        assert names == ["ast_grep_search", "ripgrep_search", "read_file", "submit"]

        turn = env.step(reference(task))
        assert not turn.done and turn.reward is None
        assert [r["error"] for r in turn.observation.results] == [""]
        assert turn.observation.results[0]["observation"] == in_process_text(task)
        state = env.state()
        assert (state.blueprint_id, state.turns_used, state.step_count) == (task.blueprint.id, 1, 1)
        assert state.episode_id == first.observation.episode_id

        last = env.step(submit(task))
        assert last.done and last.reward == 1.0
        info = last.observation.info
        assert info["end_reason"] == "submitted" and info["turns"] == 2 and info["calls"] == 1
        assert info["components"]["R_find"] == 1.0 and info["components"]["R_submit"] == 1.0
        assert info["metrics"]["precision"] == 1.0 and info["metrics"]["evidence_drop"] == 0.0
        # The session goes on with the next episode: a reset by index.
        again = env.reset(index=1)
        assert again.observation.blueprint_id == as_tasks(seed_blueprints()).tasks[1].blueprint.id
        assert env.state().turns_used == 0


# --- faults --------------------------------------------------------------------------------------


def test_a_malformed_action_is_an_error_observation_not_a_500(url: str, tasks: list[Task]) -> None:
    with client(url) as env:
        before = env.step(reference(tasks[0]))
        assert "no_episode" in before.observation.error and not before.done
        env.reset(blueprint_id=tasks[0].blueprint.id)
        not_a_list = env.step(action("ripgrep_search foo"))
        assert "malformed_action" in not_a_list.observation.error and not not_a_list.done
        assert env.state().turns_used == 0  # not a turn: the episode is as it was
        odd = env.step(action([
            {"nme": "ripgrep_search"}, 5, {"name": "ripgrep_search", "arguments": "{broken"},
            {"name": "rm", "arguments": {}},
            {"name": "read_file", "arguments": {"path": "../ledger/README.md"}},
            {"name": "ripgrep_search", "arguments": {"pattern": "x", "paths": ["/etc"]}},
        ]))  # fmt: skip
        kinds = [r["error"] for r in odd.observation.results]
        assert kinds == ["malformed_call", "malformed_call", "malformed_json", "unknown_tool",
                         "path_outside_corpus", "path_outside_corpus"]  # fmt: skip
        assert not odd.done and env.state().turns_used == 1
        assert env.step(submit(tasks[0])).done
    # Not even an action (a field the action's schema forbids, not JSON): OpenEnv's error
    # message, and the session goes on.
    with ws(url) as raw:
        raw.send(json.dumps({"type": "reset", "data": {"blueprint_id": tasks[0].blueprint.id}}))
        assert json.loads(raw.recv(STOP_S))["type"] == "observation"
        raw.send(json.dumps({"type": "step", "data": {"calls": [], "oops": 1}}))
        assert json.loads(raw.recv(STOP_S))["data"]["code"] == "VALIDATION_ERROR"
        raw.send("{not json")
        assert json.loads(raw.recv(STOP_S))["data"]["code"] == "INVALID_JSON"
        raw.send(json.dumps({"type": "step", "data": submit(tasks[0]).model_dump()}))
        assert json.loads(raw.recv(STOP_S))["data"]["reward"] == 1.0
    # Over plain HTTP: 422 for a body that is not an action, never a 500.
    headers = {"Authorization": f"Bearer {TOKEN}"}
    bad = httpx.post(f"{url}/step", json={"action": "nope"}, headers=headers)
    assert bad.status_code == 422
    stateless = httpx.post(f"{url}/step", json={"action": {"calls": []}}, headers=headers)
    assert stateless.status_code == 200 and "no_episode" in stateless.json()["observation"]["error"]


def test_a_session_sees_only_the_servers_tasks(url: str) -> None:
    with client(url) as env:
        with pytest.raises(RuntimeError, match="no task 'not-a-task' on this server"):
            env.reset(blueprint_id="not-a-task")
        with pytest.raises(RuntimeError, match="index must be 0 to"):
            env.reset(index=10_000)
        with pytest.raises(RuntimeError, match="reset takes blueprint_id, index, seed"):
            env.reset(corpus="/etc")
        first = env.reset(seed=7).observation.blueprint_id
        assert env.reset(seed=7).observation.blueprint_id == first  # a seed picks the same task


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_64_concurrent_sessions_each_get_their_own_episode(
    url: str, tasks: list[Task], transport: str
) -> None:
    chosen = tasks[:64]
    expected_text = {t.blueprint.id: in_process_text(t) for t in chosen}
    # Odd sessions submit nothing: a reward of their own, which must not leak to the others.
    answers = [submit(t if i % 2 == 0 else None) for i, t in enumerate(chosen)]
    expected_reward = [in_process_reward(t, reference(t), answers[i]) for i, t in enumerate(chosen)]
    assert sorted(set(expected_reward))[-1] == 1.0 and len(set(expected_reward)) > 1
    barrier = threading.Barrier(len(chosen), timeout=START_S)
    outcomes: dict[int, tuple[str, str, float | None, str]] = {}
    errors: list[BaseException] = []

    def play(i: int, task: Task) -> None:
        try:
            if transport == "http":
                play_http(i, task)
                return
            with client(url) as env:
                env.reset(blueprint_id=task.blueprint.id)
                barrier.wait()  # every session open at once, then all step together
                turn = env.step(reference(task))
                last = env.step(answers[i])
                outcomes[i] = (
                    turn.observation.results[0]["observation"],
                    last.observation.info["blueprint_id"],
                    last.reward,
                    env.state().blueprint_id,
                )
        except BaseException as err:
            errors.append(err)
            barrier.abort()

    def play_http(i: int, task: Task) -> None:
        with http(url) as session:
            sid = http_reset(session, blueprint_id=task.blueprint.id)["session_id"]
            barrier.wait()
            turn = http_step(session, sid, reference(task))
            last = http_step(session, sid, answers[i])
            outcomes[i] = (
                turn["observation"]["results"][0]["observation"],
                last["observation"]["info"]["blueprint_id"],
                last["reward"],
                http_state(session, sid)["blueprint_id"],
            )
            session.post("/session/close", json={"session_id": sid})

    threads = [threading.Thread(target=play, args=(i, t)) for i, t in enumerate(chosen)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    for i, task in enumerate(chosen):
        text, info_id, reward, state_id = outcomes[i]
        bp = task.blueprint.id
        assert (text, info_id, state_id) == (expected_text[bp], bp, bp)
        assert reward == expected_reward[i]


# --- plain HTTP sessions --------------------------------------------------------------------------


def test_a_plain_http_episode_keeps_its_state_by_session_id(url: str, tasks: list[Task]) -> None:
    task = tasks[0]
    with http(url) as session:
        first = http_reset(session, blueprint_id=task.blueprint.id)
        sid = first["session_id"]
        assert first["observation"]["blueprint_id"] == task.blueprint.id and not first["done"]
        assert [m["role"] for m in first["observation"]["messages"]] == ["system", "user"]
        turn = http_step(session, sid, reference(task))
        assert turn["observation"]["results"][0]["observation"] == in_process_text(task)
        assert not turn["done"] and turn["observation"]["error"] == ""
        state = http_state(session, sid)
        assert (state["blueprint_id"], state["turns_used"], state["step_count"]) == (
            task.blueprint.id, 1, 1)  # fmt: skip
        assert state["episode_id"] == first["observation"]["episode_id"]
        last = http_step(session, sid, submit(task))
        assert last["done"] and last["reward"] == 1.0
        assert last["observation"]["info"]["turns"] == 2
        assert session.post("/session/close", json={"session_id": sid}).json()["closed"]
        gone = session.post("/session/step", json={"session_id": sid, "action": {"calls": []}})
        assert gone.status_code == 410 and "was closed" in gone.json()["detail"]
        unknown = session.get("/session/state", params={"session_id": "0" * 32})
        assert unknown.status_code == 404 and "no session" in unknown.json()["detail"]
    # OpenEnv's own /reset and /step stay as OpenEnv defines them: stateless.
    assert http(url).post("/reset", json={}).json()["observation"]["episode_id"]


def test_two_interleaved_http_sessions_do_not_mix(url: str, tasks: list[Task]) -> None:
    a, b = tasks[4], tasks[5]
    with http(url) as one, http(url) as other:
        sa = http_reset(one, blueprint_id=a.blueprint.id)["session_id"]
        sb = http_reset(other, blueprint_id=b.blueprint.id)["session_id"]
        assert sa != sb
        # Turns alternate; each session sees only its own task's observations.
        assert http_step(other, sb, reference(b))["observation"]["results"][0][
            "observation"] == in_process_text(b)  # fmt: skip
        assert http_step(one, sa, reference(a))["observation"]["results"][0][
            "observation"] == in_process_text(a)  # fmt: skip
        assert http_state(one, sa)["blueprint_id"] == a.blueprint.id
        assert http_state(other, sb)["turns_used"] == 1
        # A submits its spans, B submits nothing: each its own reward.
        last_b = http_step(other, sb, submit(None))
        assert last_b["reward"] == in_process_reward(b, reference(b), submit(None)) < 1.0
        assert not http_state(one, sa)["done"]  # B's end is not A's
        assert http_step(one, sa, submit(a))["reward"] == 1.0


def test_openenv_validate_passes_on_the_running_server(servers: dict[str, Served]) -> None:
    served = servers["plain"].ready()  # no token: OpenEnv's validator sends none
    openenv = Path(sys.executable).with_name("openenv")
    done = subprocess.run([str(openenv), "validate", "--url", served.url, "--timeout", "60"],
                          capture_output=True, text=True, timeout=START_S)  # fmt: skip
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["passed"], report
    assert report["mode"] == "simulation" and report["summary"]["failed_criteria"] == []


def test_a_client_that_disconnects_mid_episode_does_not_affect_others(
    url: str, tasks: list[Task]
) -> None:
    a, b = tasks[0], tasks[1]
    with client(url) as env:
        env.reset(blueprint_id=b.blueprint.id)
        env.step(reference(b))
        # Another client drops its connection in the middle of a turn, without a goodbye.
        with ws(url) as raw:
            raw.send(json.dumps({"type": "reset", "data": {"blueprint_id": a.blueprint.id}}))
            assert json.loads(raw.recv(STOP_S))["type"] == "observation"
            raw.send(json.dumps({"type": "step", "data": {"calls": reference(a).calls * 8}}))
            raw.socket.close()
        last = env.step(submit(b))
        assert last.done and last.reward == 1.0
    with client(url) as fresh:  # and the server still opens sessions
        assert fresh.reset(blueprint_id=a.blueprint.id).observation.blueprint_id == a.blueprint.id


# --- the token -----------------------------------------------------------------------------------


def test_with_a_token_a_request_without_it_gets_401(url: str) -> None:
    assert httpx.get(f"{url}/health").status_code == 401
    wrong = httpx.get(f"{url}/health", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.headers["www-authenticate"] == "Bearer"
    assert httpx.get(f"{url}/health", headers={"Authorization": f"Bearer {TOKEN}"}).is_success
    assert httpx.post(f"{url}/session/reset", json={}).status_code == 401
    with pytest.raises(ConnectionError, match="401"), client(url, token="") as env:
        env.reset()
    with pytest.raises(ConnectionError, match="401"), client(url, token="nope") as env:
        env.reset()


def test_a_non_loopback_bind_without_a_token_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("CODESEARCH_GYM_TOKEN", raising=False)
    assert main(["gym", "serve", "--host", "0.0.0.0", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "refusing to listen on 0.0.0.0 without a token" in err and "CODESEARCH_GYM_TOKEN" in err
    # With the token from the environment the settings pass (the server is not started here).
    monkeypatch.setenv("CODESEARCH_GYM_TOKEN", "t")
    assert server_settings_from(build_parser().parse_args(["gym", "serve", "--host", "::"])).token


def test_which_hosts_are_loopback_and_what_a_token_allows() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.8.0.1", "::1", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.2", "example.org", ""))
    assert ServerSettings(host="0.0.0.0", token="t").token == "t"
    for bad in (" t", "t\n", "a\x00b"):
        with pytest.raises(ValueError, match="token"):
            ServerSettings(token=bad)


# --- stopping ------------------------------------------------------------------------------------


def _session_members(sid: int) -> list[str]:
    """Processes of session `sid` still alive: what the server started and left behind."""
    left = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        if int(fields[3]) == sid:  # state, ppid, pgrp, session
            left.append(text[: text.rindex(")") + 1])
    return left


def test_sigterm_with_episodes_open_stops_them_and_leaves_no_tool_process(
    servers: dict[str, Served], tasks: list[Task]
) -> None:
    served = servers["plain"].ready()  # no token: loopback
    with client(served.url, token="") as done:  # one that finishes and says goodbye
        done.reset(blueprint_id=tasks[3].blueprint.id)
        assert done.step(submit(tasks[3])).done
    clients = [client(served.url, token="") for _ in range(3)]
    for env, task in zip(clients, tasks, strict=False):
        env.connect()
        env.reset(blueprint_id=task.blueprint.id)
        env.step(reference(task))  # mid-episode: searched, not submitted
    try:
        assert served.stop() == 0
    finally:
        for env in clients:
            env.close()  # the server is gone: this ends the client's own thread
    assert any("stopped 3 open episode(s)" in line for line in served.lines), served.lines
    # Nothing logged as a failure: not the goodbye (OpenEnv 0.3 raised on it), not the stop.
    assert not [line for line in served.lines if "Traceback" in line or "ERROR" in line]
    assert _session_members(served.proc.pid) == []
