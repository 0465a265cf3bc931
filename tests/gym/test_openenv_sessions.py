"""Plain-HTTP sessions of the gym's OpenEnv server (`gym.openenv_sessions`), in process: the
server's real FastAPI app (OpenEnv's routes and the `/session/*` ones) under Starlette's test
client, the real rg / ast-grep behind each step. Only the sessions' clock is the test's, so that
expiry is checked without sleeping. The same routes over a real socket, next to the WebSocket:
tests/gym/test_openenv_server.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from codesearch_core.gym import Task, as_tasks, seed_blueprints
from codesearch_core.gym.openenv_server import TaskSet, create_gym_app
from codesearch_core.gym.openenv_sessions import HttpSessions

IDLE_S = 30.0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    return [t for t in as_tasks(seed_blueprints()).tasks if t.blueprint.plan is None]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def served(tasks: list[Task], clock: Clock) -> Iterator[tuple[TestClient, TaskSet]]:
    task_set = TaskSet(tasks)
    app = create_gym_app(task_set, max_sessions=2, session_idle_s=IDLE_S)
    app.state.http_sessions.clock = clock
    with TestClient(app) as client:
        yield client, task_set


def reset(client: TestClient, **body: Any) -> Any:
    return client.post("/session/reset", json=body)


def step(client: TestClient, sid: str, calls: list[dict[str, Any]]) -> Any:
    return client.post("/session/step", json={"session_id": sid, "action": {"calls": calls}})


def submit_calls(task: Task) -> list[dict[str, Any]]:
    spans = [s.to_dict() for s in task.blueprint.expected]
    return [{"name": "submit", "arguments": {"locations": spans}}]


def test_an_idle_session_expires_and_says_so(
    served: tuple[TestClient, TaskSet], tasks: list[Task], clock: Clock
) -> None:
    client, task_set = served
    sid = reset(client, blueprint_id=tasks[0].blueprint.id).json()["session_id"]
    clock.now += IDLE_S - 1  # idle, not yet too long: a request keeps it alive
    assert step(client, sid, [tasks[0].blueprint.reference_call.to_dict()]).status_code == 200
    clock.now += IDLE_S - 1
    assert client.get("/session/state", params={"session_id": sid}).json()["turns_used"] == 1
    clock.now += IDLE_S + 1
    gone = client.get("/session/state", params={"session_id": sid})
    assert gone.status_code == 410
    assert f"expired after {IDLE_S:g} s idle" in gone.json()["detail"]
    assert task_set.stopped == 1  # its open episode stopped as it expired
    # Expired for good: a step on it is refused the same way.
    assert step(client, sid, submit_calls(tasks[0])).status_code == 410


def test_unknown_closed_and_missing_ids_are_clear_4xx(
    served: tuple[TestClient, TaskSet], tasks: list[Task]
) -> None:
    client, task_set = served
    unknown = step(client, "f" * 32, [])
    assert unknown.status_code == 404 and "no session 'ffff" in unknown.json()["detail"]
    assert client.get("/session/state", params={"session_id": "x"}).status_code == 404
    assert client.post("/session/step", json={"action": {"calls": []}}).status_code == 422
    assert client.get("/session/state").status_code == 422
    sid = reset(client, blueprint_id=tasks[1].blueprint.id).json()["session_id"]
    step(client, sid, [tasks[1].blueprint.reference_call.to_dict()])
    before = task_set.stopped
    assert client.post("/session/close", json={"session_id": sid}).json()["closed"] is True
    assert task_set.stopped == before + 1  # the open episode stopped with its session
    closed = step(client, sid, [])
    assert closed.status_code == 410 and "was closed" in closed.json()["detail"]
    assert client.post("/session/close", json={"session_id": sid}).status_code == 410
    # A reset with a closed session's id does not bring it back.
    assert reset(client, session_id=sid).status_code == 410


def test_sessions_are_capped_and_a_refused_reset_holds_no_slot(
    served: tuple[TestClient, TaskSet], tasks: list[Task], clock: Clock
) -> None:
    client, _ = served
    sessions: HttpSessions = client.app.state.http_sessions  # type: ignore[attr-defined]
    bad = reset(client, blueprint_id="not-a-task")
    assert bad.status_code == 400 and "no task 'not-a-task'" in bad.json()["detail"]
    assert reset(client, corpus="/etc").status_code == 400
    assert reset(client, seed=-1).status_code == 422  # OpenEnv's own reset rule: seed >= 0
    assert len(sessions) == 0
    first = reset(client, index=0).json()["session_id"]
    reset(client, index=1)
    full = reset(client, index=2)
    assert full.status_code == 503 and "--max-sessions 2" in full.json()["detail"]
    client.post("/session/close", json={"session_id": first})
    third = reset(client, index=2)
    assert third.status_code == 200
    # Idle ones make room: they are swept when a new session is asked for.
    clock.now += IDLE_S + 1
    assert reset(client, index=3).status_code == 200 and len(sessions) == 1


def test_a_session_plays_episode_after_episode(
    served: tuple[TestClient, TaskSet], tasks: list[Task]
) -> None:
    client, _ = served
    a, b = tasks[2], tasks[3]
    sid = reset(client, blueprint_id=a.blueprint.id).json()["session_id"]
    assert step(client, sid, submit_calls(a)).json()["reward"] == 1.0
    again = reset(client, session_id=sid, blueprint_id=b.blueprint.id)
    assert again.json()["session_id"] == sid
    assert again.json()["observation"]["blueprint_id"] == b.blueprint.id
    state = client.get("/session/state", params={"session_id": sid}).json()
    assert (state["blueprint_id"], state["turns_used"], state["done"]) == (b.blueprint.id, 0, False)
    # A step that is not an action: OpenEnv's 422, and the session goes on.
    assert (
        client.post("/session/step", json={"session_id": sid, "action": {"x": 1}}).status_code
        == 422
    )
    assert step(client, sid, submit_calls(b)).json()["reward"] == 1.0


def test_the_server_stopping_ends_every_http_session(tasks: list[Task]) -> None:
    task_set = TaskSet(tasks)
    app = create_gym_app(task_set, max_sessions=4)
    with TestClient(app) as client:
        for task in tasks[:3]:
            sid = reset(client, blueprint_id=task.blueprint.id).json()["session_id"]
            step(client, sid, [task.blueprint.reference_call.to_dict()])
    assert task_set.stopped == 3 and len(app.state.http_sessions) == 0


def test_settings_refuse_an_idle_time_out_of_range() -> None:
    from codesearch_core.gym import ServerSettings

    for bad in (0.0, -5.0, float("nan"), 100_000.0):
        with pytest.raises(ValueError, match="session_idle_s must be 1 to 86400"):
            ServerSettings(session_idle_s=bad)
