"""Episodes over plain HTTP that keep their state: the OpenEnv server's `/session/*` routes.

OpenEnv 0.3's own `/reset` and `/step` build a fresh environment for every request (only its `/ws`
WebSocket holds one), so over plain HTTP an episode forgets its reset before the first step. A
trainer behind a proxy that drops WebSockets, or one written against plain HTTP, needs the episode
to live between requests (OpenEnv issues #194, #357, #432). These routes hold one environment per
session id, beside OpenEnv's routes, which stay as OpenEnv defines them (its clients and `openenv
validate` rely on their shapes):

- `POST /session/reset` `{"blueprint_id": ...}` (the arguments of `/reset`): opens a session and
  starts its episode; the answer is `/reset`'s (`observation`, `reward`, `done`) plus its
  `session_id`. With `"session_id": ID` it starts the next episode in that session instead.
- `POST /session/step` `{"session_id": ID, "action": {...}}`: one turn, answered as `/step` is.
- `GET /session/state?session_id=ID`: the episode's state, as `/state`.
- `POST /session/close` `{"session_id": ID}`: ends the session and stops its episode.

A session expires once idle (no request) for `idle_s` seconds; at most `max_sessions` are open at
once (a reset that would open one more is refused with 503; expired ones are swept first). An id
that is unknown, closed or expired is refused with a 4xx that says which (404 unknown, 410 gone).
Each session's calls run one at a time (the environment's own lock), on a pool with a thread per
session, as the WebSocket sessions do; the environment's `close` stops an open episode.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from fastapi import FastAPI, HTTPException, Query
from fastapi.responses import JSONResponse
from openenv.core.env_server import Action, Environment
from openenv.core.env_server.serialization import deserialize_action, serialize_observation
from openenv.core.env_server.types import ResetRequest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from codesearch_core.gym.openenv_settings import DEFAULT_SESSION_IDLE_S

#: Ids of closed or expired sessions remembered, to tell "gone" (410) from "never existed" (404).
REMEMBERED_GONE: Final = 4096
#: The most seconds between two sweeps for expired sessions (a quarter of the idle time if less).
SWEEP_EVERY_S: Final = 30.0

T = TypeVar("T")


class SessionError(Exception):
    """A request naming a session it may not use; `status` is the HTTP status it answers with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(slots=True)
class _Session:
    env: Environment[Any, Any, Any]
    last_used: float
    #: Requests running on it now: a session is never expired in the middle of a turn.
    busy: int = 0


class HttpSessions:
    """The open sessions: one environment each, capped in number, expired when idle."""

    def __init__(
        self,
        make_env: Callable[[], Environment[Any, Any, Any]],
        max_sessions: int,
        idle_s: float = DEFAULT_SESSION_IDLE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_sessions < 1 or idle_s <= 0:
            raise ValueError(f"need max_sessions >= 1 and idle_s > 0, got {max_sessions}, {idle_s}")
        self.make_env = make_env
        self.max_sessions = max_sessions
        self.idle_s = idle_s
        self.clock = clock
        self._open: dict[str, _Session] = {}
        self._gone: OrderedDict[str, str] = OrderedDict()
        self._making = 0  # environments being made for sessions being opened
        self._lock = threading.Lock()
        # A thread per session at most, made as needed: a turn waits on its searches, and one
        # session's long turn must not hold up another's (OpenEnv gives each WebSocket its own).
        self.pool = ThreadPoolExecutor(max_workers=max_sessions, thread_name_prefix="gym-session")

    def __len__(self) -> int:
        return len(self._open)

    def open(self) -> tuple[str, Environment[Any, Any, Any]]:
        """A new session; SessionError(503) when `max_sessions` are open (after a sweep)."""
        _close_all(self.sweep())
        with self._lock:
            if len(self._open) + self._making >= self.max_sessions:
                raise SessionError(
                    503,
                    f"the server holds {len(self._open)} HTTP sessions, its cap (--max-sessions "
                    f"{self.max_sessions}): close one (POST /session/close) or wait, sessions "
                    f"expire after {self.idle_s:g} s idle",
                )
            # Counted before the environment exists, so two opens cannot both take the last slot.
            self._making += 1
        try:
            env = self.make_env()
        except BaseException:
            with self._lock:
                self._making -= 1
            raise
        sid = uuid.uuid4().hex
        with self._lock:
            self._making -= 1
            self._open[sid] = _Session(env, self.clock())
        return sid, env

    def acquire(self, sid: Any) -> Environment[Any, Any, Any]:
        """The environment of session `sid`, marked busy until `release`; SessionError(404/410)
        for an id that is unknown, closed or expired."""
        now = self.clock()
        expired = None
        with self._lock:
            session = self._open.get(sid) if isinstance(sid, str) else None
            if session is not None and session.busy == 0 and now - session.last_used > self.idle_s:
                expired = self._forget(sid, f"expired after {self.idle_s:g} s idle")
                session = None
            if session is None:
                error = self._refusal(sid)
            else:
                session.busy += 1
                session.last_used = now
                return session.env
        if expired is not None:
            _close_all([expired])
        raise error

    def release(self, sid: str) -> None:
        with self._lock:
            session = self._open.get(sid)
            if session is not None:
                session.busy -= 1
                session.last_used = self.clock()  # idle counts from the end of a long turn

    def close(self, sid: Any) -> None:
        """End session `sid` and stop its episode; SessionError(404/410) as `acquire`."""
        with self._lock:
            session = self._open.get(sid) if isinstance(sid, str) else None
            if session is None:
                raise self._refusal(sid)
            env = self._forget(sid, "was closed")
        _close_all([env])  # after its running turn, if any: the environment's lock

    def sweep(self) -> list[Environment[Any, Any, Any]]:
        """Forget the sessions idle for longer than `idle_s`; their environments, to close."""
        now = self.clock()
        with self._lock:
            stale = [
                sid
                for sid, s in self._open.items()
                if s.busy == 0 and now - s.last_used > self.idle_s
            ]
            return [self._forget(sid, f"expired after {self.idle_s:g} s idle") for sid in stale]

    def close_all(self) -> None:
        """The server is stopping: every session ends, its episode stopped."""
        with self._lock:
            envs = [
                self._forget(sid, "was closed when the server stopped") for sid in list(self._open)
            ]
        _close_all(envs)
        self.pool.shutdown(wait=False, cancel_futures=True)

    def _forget(self, sid: str, why: str) -> Environment[Any, Any, Any]:
        env = self._open.pop(sid).env
        self._gone[sid] = why
        while len(self._gone) > REMEMBERED_GONE:
            self._gone.popitem(last=False)
        return env

    def _refusal(self, sid: Any) -> SessionError:
        if not isinstance(sid, str) or not sid:
            return SessionError(400, "give the session_id that POST /session/reset answered")
        why = self._gone.get(sid)
        if why is not None:
            return SessionError(410, f"session {sid} {why}: POST /session/reset starts a new one")
        return SessionError(
            404,
            f"no session {sid[:64]!r} on this server (POST /session/reset answers a session_id; "
            "sessions do not survive a restart)",
        )


def _close_all(envs: list[Environment[Any, Any, Any]]) -> None:
    for env in envs:
        env.close()


# --- the routes ----------------------------------------------------------------------------------


class SessionResetRequest(ResetRequest):
    """`/reset`'s arguments (OpenEnv's `seed` and `episode_id`, the environment's own such as
    `blueprint_id`) and, to start the next episode of an open session, its `session_id`."""

    session_id: str | None = Field(default=None, description="omit to open a new session")


class SessionStepRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_id: str
    action: dict[str, Any]
    timeout_s: float | None = None


class SessionCloseRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_id: str


def add_session_routes(app: FastAPI, sessions: HttpSessions, action_cls: type[Action]) -> None:
    """The `/session/*` routes over `sessions`; the sessions end when the app shuts down.

    Each answers a JSONResponse of plain data (pydantic's `model_dump`, then the C `json`), not a
    dict for FastAPI to encode: its pure-Python walk of a reset's prompt and tools held the event
    loop long enough, with 64 sessions, that every other session's step waited behind it."""

    async def in_session(sid: str, work: Callable[[Environment[Any, Any, Any]], T]) -> T:
        try:
            env = sessions.acquire(sid)
        except SessionError as err:
            raise HTTPException(err.status, str(err)) from None
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(sessions.pool, work, env)
        finally:
            sessions.release(sid)

    @app.post("/session/reset", tags=["Sessions"], summary="Start an episode in a session")
    async def session_reset(request: SessionResetRequest | None = None) -> JSONResponse:
        request = request or SessionResetRequest()  # no body: a new session, the next task
        kwargs = request.model_dump(exclude_unset=True, exclude={"session_id"})
        sid = request.session_id
        opened = sid is None
        if sid is None:
            try:
                sid = await asyncio.get_running_loop().run_in_executor(
                    sessions.pool, _open, sessions
                )
            except SessionError as err:
                raise HTTPException(err.status, str(err)) from None
        try:
            observation = await in_session(sid, lambda env: env.reset(**kwargs))
        except (ValueError, TypeError) as err:  # a task it does not have, an unknown argument
            if opened:  # a refused first reset leaves no session behind
                sessions.close(sid)
            raise HTTPException(400, str(err)) from None
        return JSONResponse({"session_id": sid, **serialize_observation(observation)})

    @app.post("/session/step", tags=["Sessions"], summary="Play one turn of a session's episode")
    async def session_step(request: SessionStepRequest) -> JSONResponse:
        try:
            action = deserialize_action(request.action, action_cls)
        except ValidationError as err:
            raise HTTPException(422, err.errors()) from None
        observation = await in_session(request.session_id, lambda env: env.step(action))
        return JSONResponse(serialize_observation(observation))

    @app.get("/session/state", tags=["Sessions"], summary="A session's episode state")
    async def session_state(session_id: str = Query(...)) -> JSONResponse:
        state = await in_session(session_id, lambda env: env.state)
        return JSONResponse(state.model_dump())

    @app.post("/session/close", tags=["Sessions"], summary="End a session and its episode")
    async def session_close(request: SessionCloseRequest) -> JSONResponse:
        try:
            await asyncio.get_running_loop().run_in_executor(
                sessions.pool, sessions.close, request.session_id
            )
        except SessionError as err:
            raise HTTPException(err.status, str(err)) from None
        return JSONResponse({"session_id": request.session_id, "closed": True})

    sweeper: list[asyncio.Task[None]] = []

    async def sweep_now_and_then() -> None:
        # Expired sessions are also refused and swept whenever a request meets them; this ends
        # the ones nobody asks about again, so their episodes stop near their time, not later.
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(sessions.idle_s / 4, SWEEP_EVERY_S))
            await loop.run_in_executor(sessions.pool, lambda: _close_all(sessions.sweep()))

    async def start_sweeping() -> None:
        sweeper.append(asyncio.create_task(sweep_now_and_then()))

    async def end_sessions() -> None:
        for task in sweeper:
            task.cancel()
        await asyncio.to_thread(sessions.close_all)

    app.router.on_startup.append(start_sweeping)
    app.router.on_shutdown.append(end_sessions)


def _open(sessions: HttpSessions) -> str:
    return sessions.open()[0]
