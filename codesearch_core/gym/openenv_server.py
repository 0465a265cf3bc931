"""The gym as an OpenEnv environment server (openenv-core 0.3): `codesearch gym serve`.

OpenEnv's own server (`create_fastapi_app`, its `/ws` sessions) runs `CodeSearchEnvironment`, one
instance per WebSocket session, so each session plays one episode at a time:

- `reset(blueprint_id=ID)` (or `index=N`, or `seed=S`; none: the next task in turn) starts an
  episode of a task of the server's task set; the observation holds the prompt `messages` and the
  `tools` (OpenAI function tools);
- `step(CodeSearchAction(calls=[{"name", "arguments"}, ...]))` plays one turn (`Episode.step`): the
  observation's `results` are the calls' observations in order; at the end `done`, the `reward` and
  `info` (its components, `EpisodeResult.info`);
- `state` is the episode id, the step count, the blueprint and the turns used.

A session sees only the server's tasks, and so only their corpora: `reset` refuses any other
blueprint, and every path a call names is checked against the task's corpus root (`read_file`,
the tools' `paths`). What an agent writes never fails a step: a malformed call is an error
observation (`Episode.step`), and so is an action that is not a list of calls. A session that ends
(the client closes or disconnects) stops its episode; so does the server when it stops.

Over plain HTTP, OpenEnv's `/reset` and `/step` hold no episode between requests; the server's
`/session/reset`, `/session/step`, `/session/state` and `/session/close` do, by a session id, with
an idle expiry and a cap (`gym.openenv_sessions`).

Imported only by `codesearch gym serve` and trainers: OpenEnv brings FastAPI, uvicorn, Gradio and
FastMCP, seconds to import, which nothing else in the studio pays.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import random
import signal
import sys
import threading
import uuid
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Final

import uvicorn
from fastapi import FastAPI
from openenv.core.env_server import Action, Environment, State, create_fastapi_app
from openenv.core.env_server import Observation as EnvObservation
from pydantic import Field
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocketDisconnect

from codesearch_core.gym.episode import Episode
from codesearch_core.gym.openenv_sessions import HttpSessions, add_session_routes
from codesearch_core.gym.openenv_settings import (
    DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_S,
    BearerToken,
    ServerSettings,
)
from codesearch_core.gym.settings import DEFAULT_SETTINGS, GymSettings
from codesearch_core.gym.tasks import Task

ENV_NAME: Final = "codesearch-gym"
#: The refusal kind of an action that is not a list of calls (beside `actions.Refusal`'s kinds).
MALFORMED_ACTION: Final = "malformed_action"
NO_EPISODE: Final = "no_episode"
#: How long the server waits for open sessions to close when it stops, before it cancels them
#: (each then stops its episode, which waits at most one search's timeout).
GRACEFUL_S: Final = 5


class CodeSearchAction(Action):
    """One turn: every call of one assistant message, each `{"name", "arguments"}` (arguments an
    object or its JSON text) or an OpenAI tool call (`{"id", "function": {...}}`)."""

    #: `Any`, not a list: an action that is not a list of calls must reach the environment, which
    #: answers it with an error observation, rather than fail OpenEnv's validation.
    calls: Any = Field(default=None, description="the calls of one turn, in order")


class CodeSearchObservation(EnvObservation):
    """What a reset or a step answers (`done`, `reward` are OpenEnv's own fields)."""

    blueprint_id: str = ""
    episode_id: str = ""
    #: reset: the system and user messages, and the tools the agent may call.
    messages: list[dict[str, Any]] = Field(default_factory=list)
    tools: list[dict[str, Any]] = Field(default_factory=list)
    #: step: each call's observation in the order of the calls (`Observation.to_dict`).
    results: list[dict[str, Any]] = Field(default_factory=list)
    #: Why the whole action was refused (`malformed_action`, `no_episode`), empty otherwise.
    error: str = ""
    turns_used: int = 0
    turns_left: int = 0
    #: At the end: the reward's components and the episode's counts (`EpisodeResult.info`).
    info: dict[str, Any] = Field(default_factory=dict)


class CodeSearchState(State):
    blueprint_id: str = ""
    turns_used: int = 0
    max_turns: int = 0
    done: bool = False


class TaskSet:
    """The server's tasks, shared by its sessions: which one a reset picks, and every live
    environment (to stop their episodes when the server stops)."""

    def __init__(self, tasks: Sequence[Task], settings: GymSettings = DEFAULT_SETTINGS) -> None:
        if not tasks:
            raise ValueError("a server needs at least one task")
        self.tasks = tuple(tasks)
        self.settings = settings
        self.by_id = {t.blueprint.id: t for t in self.tasks}
        self._turn = itertools.count()
        self._lock = threading.Lock()
        self._live: weakref.WeakSet[CodeSearchEnvironment] = weakref.WeakSet()
        #: Episodes stopped unfinished so far (a session closed or gone, the server stopping).
        self.stopped = 0

    def pick(self, blueprint_id: Any = None, index: Any = None, seed: Any = None) -> Task:
        """The task a reset asks for; a ValueError (the client's error message) if none is."""
        if blueprint_id is not None:
            task = self.by_id.get(blueprint_id) if isinstance(blueprint_id, str) else None
            if task is None:
                raise ValueError(
                    f"no task {str(blueprint_id)[:200]!r} on this server ({len(self.tasks)} "
                    "tasks; `codesearch gym tasks` lists them)"
                )
            return task
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, int):
                raise ValueError(f"index must be an integer, got {str(index)[:40]!r}")
            if not 0 <= index < len(self.tasks):
                raise ValueError(f"index must be 0 to {len(self.tasks) - 1}, got {index}")
            return self.tasks[index]
        if seed is not None:  # OpenEnv has checked it: an integer >= 0
            return random.Random(seed).choice(self.tasks)
        with self._lock:  # no choice made: the tasks in turn, so N sessions cover the set
            return self.tasks[next(self._turn) % len(self.tasks)]

    def register(self, env: CodeSearchEnvironment) -> None:
        with self._lock:
            self._live.add(env)

    def stop_all(self) -> int:
        """Stop every open episode (the server is stopping); how many were open."""
        with self._lock:
            live = list(self._live)
        return sum(env.close_episode() for env in live)

    def count_stopped(self) -> None:
        with self._lock:
            self.stopped += 1


class CodeSearchEnvironment(Environment[CodeSearchAction, CodeSearchObservation, CodeSearchState]):
    """One session's environment: one episode at a time of a task of `task_set`."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # episodes share nothing but the tasks (read-only)

    def __init__(self, task_set: TaskSet) -> None:
        super().__init__()
        self.task_set = task_set
        self._episode: Episode | None = None
        self._episode_id = ""
        self._steps = 0
        self._lock = threading.Lock()  # reset, step and close may come from different threads
        task_set.register(self)

    # --- OpenEnv's interface ---------------------------------------------------------------------

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        blueprint_id: str | None = None,
        index: int | None = None,
        **kwargs: Any,
    ) -> CodeSearchObservation:
        if kwargs:  # OpenEnv passes every key to an environment that takes **kwargs
            raise ValueError(
                f"reset takes blueprint_id, index, seed and episode_id, not {', '.join(kwargs)}"
            )
        task = self.task_set.pick(blueprint_id, index, seed)
        settings = self.task_set.settings
        with self._lock:
            self._stop()
            self._episode = Episode(task.blueprint, task.corpus_root, settings)
            self._episode_id = episode_id or uuid.uuid4().hex
            self._steps = 0
            return CodeSearchObservation(
                blueprint_id=task.blueprint.id,
                episode_id=self._episode_id,
                messages=self._episode.messages(),
                tools=self._episode.tools(),
                turns_left=settings.max_turns,
            )

    def step(
        self, action: CodeSearchAction, timeout_s: float | None = None, **kwargs: Any
    ) -> CodeSearchObservation:
        # timeout_s is not honoured: each search has the settings' timeout, a turn waits for all.
        with self._lock:
            episode = self._episode
            if episode is None:
                return self._refused(
                    NO_EPISODE,
                    "no episode: reset first (in a WebSocket session, or over HTTP with "
                    "/session/reset and /session/step; HTTP /step is stateless and has none)",
                )
            self._steps += 1
            if not isinstance(action.calls, list):
                return self._refused(
                    MALFORMED_ACTION,
                    'an action is {"calls": [...]}: a list of the turn\'s calls, each '
                    f'{{"name", "arguments"}}, not {type(action.calls).__name__}',
                )
            step = episode.step(action.calls)
            observation = self._observation(episode)
            observation.results = [o.to_dict() for o in step.observations]
            return observation

    @property
    def state(self) -> CodeSearchState:
        episode = self._episode
        return CodeSearchState(
            episode_id=self._episode_id or None,
            step_count=self._steps,
            blueprint_id=episode.blueprint.id if episode is not None else "",
            turns_used=episode.turns_used if episode is not None else 0,
            max_turns=self.task_set.settings.max_turns,
            done=episode.done if episode is not None else False,
        )

    def close(self) -> None:
        """The session ended (its client closed or went away): its episode stops."""
        self.close_episode()

    # --- inside ----------------------------------------------------------------------------------

    def close_episode(self) -> bool:
        """Stop the open episode, after its running turn; whether one was open."""
        with self._lock:
            return self._stop()

    def _stop(self) -> bool:
        episode, self._episode = self._episode, None
        if episode is None or episode.done:
            return False
        episode.stop()
        self.task_set.count_stopped()
        return True

    def _observation(self, episode: Episode) -> CodeSearchObservation:
        max_turns = self.task_set.settings.max_turns
        observation = CodeSearchObservation(
            blueprint_id=episode.blueprint.id,
            episode_id=self._episode_id,
            turns_used=episode.turns_used,
            turns_left=0 if episode.done else max_turns - episode.turns_used,
            done=episode.done,
        )
        if episode.done:
            result = episode.result()
            observation.reward = result.reward
            observation.info = result.info()
        return observation

    def _refused(self, kind: str, message: str) -> CodeSearchObservation:
        episode = self._episode
        if episode is None:
            observation = CodeSearchObservation(done=False)
        else:
            observation = self._observation(episode)
        observation.error = f"error ({kind}): {message}"
        return observation


# --- the app -------------------------------------------------------------------------------------


class QuietDisconnect:
    """OpenEnv 0.3's `/ws` handler closes, on its way out, a socket its client has already closed,
    and catches only RuntimeError there; Starlette raises WebSocketDisconnect, which uvicorn logs
    as an "Exception in ASGI application" with a traceback for every client that says goodbye.
    The session is gone by then (its environment closed, its episode stopped): nothing to report."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        except WebSocketDisconnect:
            if scope["type"] != "websocket":
                raise


def create_gym_app(
    task_set: TaskSet,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    token: str = "",
    session_idle_s: float = DEFAULT_SESSION_IDLE_S,
) -> FastAPI:
    """OpenEnv's FastAPI app over `task_set`, one `CodeSearchEnvironment` per session: a
    WebSocket's, or a plain-HTTP session's (`/session/*`, up to `max_sessions` of each)."""
    make_env = functools.partial(CodeSearchEnvironment, task_set)
    app: FastAPI = create_fastapi_app(
        make_env, CodeSearchAction, CodeSearchObservation, max_concurrent_envs=max_sessions
    )
    app.state.task_set = task_set
    app.state.http_sessions = HttpSessions(make_env, max_sessions, session_idle_s)
    add_session_routes(app, app.state.http_sessions, CodeSearchAction)
    app.add_middleware(QuietDisconnect)
    if token:
        app.add_middleware(BearerToken, token=token)
    return app


class _Server(uvicorn.Server):
    """uvicorn's server, which says where it listens once it does (`--port 0` picks a port) and
    stops every open episode as it shuts down: a session whose client never closed it, or one
    cancelled after the grace period."""

    def __init__(
        self, config: uvicorn.Config, task_set: TaskSet, announce: Callable[[str], None]
    ) -> None:
        super().__init__(config)
        self.task_set = task_set
        self.announce = announce
        self.stopped_episodes = 0

    async def startup(self, sockets: list[Any] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            host, port = self.servers[0].sockets[0].getsockname()[:2]
            self.announce(f"http://{host}:{port}")

    async def shutdown(self, sockets: list[Any] | None = None) -> None:
        before = self.task_set.stopped
        await super().shutdown(sockets)  # closes the sessions: each stops its episode
        # Here, not after `serve` returns: uvicorn re-raises the signal that stopped it on its way
        # out, and the default SIGTERM action would end the process before any code after it.
        await asyncio.to_thread(self.task_set.stop_all)
        self.stopped_episodes = self.task_set.stopped - before
        if self.stopped_episodes:
            print(f"codesearch gym: stopped {self.stopped_episodes} open episode(s)",
                  file=sys.stderr, flush=True)  # fmt: skip


def _say(url: str) -> None:
    print(f"codesearch gym: OpenEnv server listening on {url} (WebSocket {url}/ws; plain-HTTP "
          f"sessions {url}/session/reset)", file=sys.stderr, flush=True)  # fmt: skip


def build_server(
    task_set: TaskSet, server: ServerSettings, announce: Callable[[str], None] = _say
) -> uvicorn.Server:
    """The uvicorn server for `task_set`; `serve` runs it (or a test, in a thread)."""
    app = create_gym_app(task_set, server.max_sessions, server.token, server.session_idle_s)
    config = uvicorn.Config(
        app,
        host=server.host,
        port=server.port,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_S,
        ws_ping_interval=None,  # a long turn must not read as a dead client
    )
    return _Server(config, task_set, announce)


def _exit_cleanly(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def serve(task_set: TaskSet, server: ServerSettings) -> int:
    """Run until Ctrl-C or SIGTERM (uvicorn handles both and shuts down gracefully), then stop what
    is still open. 0, or 1 if the server could not start (the port taken)."""
    srv = build_server(task_set, server)
    # uvicorn re-raises SIGTERM once it has shut down; this handler (which it restores first) makes
    # that a clean exit instead of a death by signal. Ctrl-C stays KeyboardInterrupt (exit 130).
    previous = signal.signal(signal.SIGTERM, _exit_cleanly)
    try:
        asyncio.run(srv.serve())
    except SystemExit as stop:
        if stop.code not in (0, None):  # uvicorn's own exit: it could not start
            return 1
    finally:
        signal.signal(signal.SIGTERM, previous)
        task_set.stop_all()  # what a failed start or a second Ctrl-C left open
    return 0 if srv.started else 1
