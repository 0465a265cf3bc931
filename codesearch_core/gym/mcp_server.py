"""The gym as an MCP server (the official `mcp` SDK, 2.0): `codesearch mcp`.

Agent harnesses (Claude Code, Codex, verifiers' MCP tools) call tools one at a time, so here every
tool call is one turn of the gym: one `Episode.step` of one call, with the gym's checks,
observations and reward, nothing of its own. Two modes:

- a task (`McpGym.for_task`): `ripgrep_search`, `ast_grep_search`, `read_file` and `submit`, with
  the gym's JSON schemas (`gym_tools`); the task's prompt is the server's `instructions`. `submit`
  ends the episode and answers its reward and components; a call after it is refused (the
  episode's own `episode_over`). Each session (the stdio client, or each streamable-HTTP session)
  plays its own episode. A harness does not know the gym's turn budget, so the tool descriptions
  say it: every call is a turn, `max_turns` in all (16 by default here: one call a turn needs more
  turns than the gym's 4 of 8 parallel calls), the reward's turn cost past the free turns.
- a corpus (`McpGym.for_corpus`): the search tools and `read_file` on one pinned corpus, no task,
  no reward, no turn limit; each call checked as the gym checks it (`actions.check`) and answered
  with the gym's observation.

What a client sends never crashes the server: a malformed call, a path outside the corpus (another
corpus's among them) is an error result (`is_error`) with the gym's refusal text. A flood is
refused, not queued: at most `CallLimits.max_in_flight` calls run at once and
`CallLimits.per_second` start a second (a bucket holding one second's worth), server-wide; a call
beyond either is answered at once with an error result and never reaches the episode (it does not
count as a turn). A call whose client goes away (the request cancelled, the stdio pipe closed, the
server stopping) has its `rg` / `ast-grep` child killed; the server kills any child left when it
stops.

The low-level `mcp.server.lowlevel.Server`, not `MCPServer`: MCPServer derives each tool's schema
from a Python signature and validates arguments with pydantic before the tool runs, while here the
schemas are the gym's and the gym's checks do the refusing, with the gym's messages.

Imported only by `codesearch mcp` (`gym.serve_mcp`) and its tests: the SDK (Starlette, uvicorn,
pydantic) is no cost the rest of the studio pays.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

import anyio
import mcp_types as types
import uvicorn
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from codesearch_core.errors import ErrorKind
from codesearch_core.gym.actions import (
    READ_FILE,
    SEARCH_TOOLS,
    ActionError,
    RawCall,
    ReadRequest,
    Refusal,
    Submission,
    check,
    gym_tools,
)
from codesearch_core.gym.episode import Episode, Observation
from codesearch_core.gym.files import read_lines
from codesearch_core.gym.openenv_settings import DEFAULT_MAX_SESSIONS, BearerToken, ServerSettings
from codesearch_core.gym.prompt import prompt_messages
from codesearch_core.gym.settings import GymSettings
from codesearch_core.gym.tasks import Task
from codesearch_core.models import ToolCall
from codesearch_core.tools import observation_text, run_tool_call

SERVER_NAME: Final = "codesearch-gym"
#: The turn limit of an MCP episode unless told: a harness makes one call a turn, so the gym's
#: 4 turns of 8 parallel calls become 16 turns of one (the reward's turn cost is unchanged).
MCP_MAX_TURNS: Final = 16
MCP_SETTINGS: Final = GymSettings(max_turns=MCP_MAX_TURNS, max_parallel=1)
#: The refusal kinds of a flood (beside `actions.Refusal`'s): the call was not run.
BUSY: Final = "too_many_calls_at_once"
RATE_LIMITED: Final = "rate_limited"
#: A call that needs a task (`submit`) on a server exploring a corpus.
NO_TASK: Final = "no_task"
#: The path of the streamable-HTTP endpoint (the SDK's default).
HTTP_PATH: Final = "/mcp"
SESSION_HEADER: Final = "mcp-session-id"
#: Sessions whose episodes one server keeps (`gym serve`'s default number of sessions).
MAX_SESSIONS: Final = DEFAULT_MAX_SESSIONS

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class CallLimits:
    """How many calls the server runs at once and starts a second, over all its sessions. The
    defaults let an agent search in parallel (the gym's 8 calls a turn) and stop a runaway client
    long before the machine's cores are the queue."""

    max_in_flight: int = 8
    per_second: float = 50.0

    def __post_init__(self) -> None:
        if not 1 <= self.max_in_flight <= 256:
            raise ValueError(f"max_in_flight must be 1 to 256, got {self.max_in_flight}")
        if not 0 < self.per_second <= 10_000:
            raise ValueError(f"per_second must be in (0, 10000], got {self.per_second}")


class _Admission:
    """The flood guard: a call is admitted or refused at once (`CallLimits`), never queued.
    Used from the server's one event loop only, so plain counters suffice."""

    def __init__(self, limits: CallLimits) -> None:
        self.limits = limits
        self.in_flight = 0
        self._tokens = limits.per_second
        self._stamp = time.monotonic()
        self.refused = 0

    def admit(self) -> tuple[str, str] | None:
        """None when the call may run (then `release` it), else its refusal kind and message."""
        now = time.monotonic()
        rate = self.limits.per_second
        self._tokens = min(rate, self._tokens + (now - self._stamp) * rate)
        self._stamp = now
        if self.in_flight >= self.limits.max_in_flight:
            self.refused += 1
            return BUSY, (
                f"{self.in_flight} calls are running, the most this server runs at once: this "
                "call was not run (and is not a turn); call again when one has answered"
            )
        if self._tokens < 1:
            self.refused += 1
            return RATE_LIMITED, (
                f"more than {rate:g} calls a second: this call was not run (and is not a turn); "
                "slow down"
            )
        self._tokens -= 1
        self.in_flight += 1
        return None

    def release(self) -> None:
        self.in_flight -= 1


# --- child processes -----------------------------------------------------------------------------


def _children(pid: int, tid: int) -> list[int]:
    """The processes thread `tid` of `pid` started and that still run (Linux keeps a list per
    thread: a search runs in the thread that steps the episode, so these are its `rg` / `sg`)."""
    try:
        text = Path(f"/proc/{pid}/task/{tid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def kill_children(tids: Sequence[int] | None = None) -> int:
    """Kill the child processes of this process (of threads `tids` only, when given); how many.
    The runner reaps what it started (its `finally` waits for the killed process)."""
    pid = os.getpid()
    if tids is None:
        with contextlib.suppress(OSError):
            tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    killed = 0
    for tid in tids or ():
        for child in _children(pid, tid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(child, signal.SIGKILL)
                killed += 1
    return killed


async def _in_thread(fn: Callable[[], _T]) -> _T:
    """`fn()` in a worker thread; if the call is cancelled meanwhile (its client gone, the server
    stopping), the tool process that thread started is killed rather than left to its timeout."""
    tids: list[int] = []
    cancelled = threading.Event()

    def work() -> _T:
        tids.append(threading.get_native_id())
        if cancelled.is_set():  # cancelled before it began: nothing to run (nor to answer)
            raise RuntimeError("the call was cancelled before it ran")
        return fn()

    try:
        return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        cancelled.set()
        kill_children(tids)
        raise


# --- the server ----------------------------------------------------------------------------------


def _text_result(text: str, error: str = "", **structured: Any) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content={"error": error, **structured},
        is_error=bool(error),
    )


def _refused(kind: str, message: str) -> types.CallToolResult:
    return _text_result(f"error ({kind}): {message}", kind)


class McpGym:
    """One `codesearch mcp` server's state: its tools, its task or corpus, each session's episode
    and the flood guard. `server()` is the SDK's server over it."""

    def __init__(
        self,
        *,
        task: Task | None,
        corpus_root: Path,
        label: str,
        settings: GymSettings,
        limits: CallLimits,
    ) -> None:
        self.task = task
        self.corpus_root = corpus_root
        self.label = label
        self.settings = settings
        self.admission = _Admission(limits)
        #: Each session's episode (task mode), by its HTTP session id ("" for the server's own).
        self._episodes: dict[str, Episode] = {}
        self._tools = self._mcp_tools()

    @staticmethod
    def for_task(
        task: Task, settings: GymSettings | None = None, limits: CallLimits | None = None
    ) -> McpGym:
        return McpGym(
            task=task,
            corpus_root=task.corpus_root,
            label=f"task {task.blueprint.id} (corpus {task.blueprint.corpus})",
            settings=settings or MCP_SETTINGS,
            limits=limits or CallLimits(),
        )

    @staticmethod
    def for_corpus(
        name: str, root: Path, settings: GymSettings | None = None, limits: CallLimits | None = None
    ) -> McpGym:
        return McpGym(
            task=None,
            corpus_root=root,
            label=f"corpus {name}",
            settings=settings or MCP_SETTINGS,
            limits=limits or CallLimits(),
        )

    # --- what a client is shown ------------------------------------------------------------------

    def instructions(self) -> str:
        """The task's prompt (system and user message), or what exploring a corpus means."""
        if self.task is not None:
            messages = prompt_messages(self.task.blueprint, self.settings)
            return "\n\n".join(str(m["content"]) for m in messages)
        return (
            f"Search the code of the {self.label} with ripgrep_search and ast_grep_search, and "
            "read its files with read_file. Paths are relative to the corpus root."
        )

    def limits_note(self) -> str:
        """What counts, said in every tool's description (an MCP harness is not told otherwise)."""
        limits = self.admission.limits
        flood = (
            f"The server runs at most {limits.max_in_flight} calls at once and {limits.per_second:g}"
            " a second; a call beyond that is refused unrun and is not a turn."
        )
        if self.task is None:
            return f"Exploring the {self.label}: no task, no reward, no turn limit. {flood}"
        s = self.settings
        return (
            f"Every call of this server is one turn of the episode: {s.max_turns} calls in all, "
            f"submit included; past the first {s.free_turns} each turn costs "
            f"{s.weights.turn:g} of the reward. {flood}"
        )

    def _mcp_tools(self) -> list[types.Tool]:
        note = self.limits_note()
        tools = []
        for tool in gym_tools():
            fn = tool["function"]
            if self.task is None and fn["name"] not in SEARCH_TOOLS | {READ_FILE}:
                continue  # submit: there is no task to submit to
            tools.append(
                types.Tool(
                    name=fn["name"],
                    description=f"{fn['description']}\n\n{note}",
                    input_schema=fn["parameters"],
                )
            )
        return tools

    # --- answering -------------------------------------------------------------------------------

    def server(self) -> Server[Any]:
        return Server(
            SERVER_NAME,
            instructions=self.instructions(),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self._tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        refusal = self.admission.admit()
        if refusal is not None:
            return _refused(*refusal)
        try:
            raw = RawCall(params.name, params.arguments)
            if self.task is None:
                return await _in_thread(lambda: self.explore(raw))
            episode = self._episode(ctx)
            if episode is None:
                return _refused(BUSY, f"this server holds {MAX_SESSIONS} sessions' episodes, "
                                "its most: start another server for more agents")  # fmt: skip
            return await _in_thread(lambda: self.play(episode, raw))
        finally:
            self.admission.release()

    def _episode(self, ctx: ServerRequestContext[Any]) -> Episode | None:
        """The episode of the caller's session: its streamable-HTTP session's when it keeps one
        (the `Mcp-Session-Id` of the 2025-11-25 protocol), the server's one episode otherwise (the
        stdio client, a sessionless 2026-07-28 client). None when the server holds as many
        sessions' episodes as it may."""
        headers = getattr(ctx.request, "headers", None)
        key = str(headers.get(SESSION_HEADER) or "") if headers is not None else ""
        episode = self._episodes.get(key)
        if episode is None and len(self._episodes) < MAX_SESSIONS:
            assert self.task is not None
            episode = Episode(self.task.blueprint, self.task.corpus_root, self.settings)
            self._episodes[key] = episode
        return episode

    def play(self, episode: Episode, raw: RawCall) -> types.CallToolResult:
        """One call as one turn of `episode`: the gym's observation, and at the end the reward."""
        step = episode.step([raw])
        observation = step.observations[0]
        s = self.settings
        status: dict[str, Any] = {
            "findings": observation.findings,
            "turns_used": episode.turns_used,
            "turns_left": 0 if episode.done else s.max_turns - episode.turns_used,
            "done": episode.done,
        }
        text = observation.text
        if episode.done and observation.error != Refusal.EPISODE_OVER:
            result = episode.result()
            parts = ", ".join(f"{k} {v:+.3f}" for k, v in result.components.items())
            text += f"\n\nepisode over ({result.end_reason}): reward {result.reward:.3f} ({parts})"
            status.update(reward=result.reward, components=result.components, info=result.info())
        return _text_result(text, observation.error, **status)

    def explore(self, raw: RawCall) -> types.CallToolResult:
        """One call on the corpus, no episode: the gym's check, then its observation."""
        observation = self._observe(raw)
        return _text_result(observation.text, observation.error, findings=observation.findings)

    def _observe(self, raw: RawCall) -> Observation:
        action = check(raw)
        if isinstance(action, Submission):
            action = ActionError(
                NO_TASK, f"no task to submit to: this server explores the {self.label}"
            )
        if isinstance(action, ReadRequest):
            read = read_lines(self.corpus_root, action)
            if isinstance(read, str):
                return Observation(raw, read)
            action = read
        if isinstance(action, ActionError):
            return Observation(raw, f"error ({action.kind}): {action.message}", action.kind)
        assert isinstance(action, ToolCall)
        run = run_tool_call(
            action,
            self.corpus_root,
            timeout_s=self.settings.timeout_s,
            max_findings=self.settings.max_findings,
        )
        error = "" if run.ok else (run.error_kind or ErrorKind.TOOL_ERROR).value
        return Observation(raw, observation_text(run), error, len(run.findings))


# --- running -------------------------------------------------------------------------------------


def _say(message: str) -> None:
    print(f"codesearch mcp: {message}", file=sys.stderr, flush=True)


async def serve_stdio(gym: McpGym) -> None:
    """Serve one client over stdin / stdout until it closes them (or goes away)."""
    server = gym.server()
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        kill_children()
        _say_refused(gym)


def _say_refused(gym: McpGym) -> None:
    if gym.admission.refused:
        _say(f"refused {gym.admission.refused} call(s) past the bounds (at most "
             f"{gym.admission.limits.max_in_flight} at once, {gym.admission.limits.per_second:g} "
             "a second)")  # fmt: skip


class _HttpServer(uvicorn.Server):
    """uvicorn's server, which says where it listens once it does (`--port 0` picks a port)."""

    async def startup(self, sockets: list[Any] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            host, port = self.servers[0].sockets[0].getsockname()[:2]
            _say(f"streamable HTTP on http://{host}:{port}{HTTP_PATH}")


def http_server(gym: McpGym, listen: ServerSettings) -> uvicorn.Server:
    """The streamable-HTTP server (one episode per MCP session); with a token every request needs
    `Authorization: Bearer TOKEN` (the OpenEnv server's guard, `gym serve`'s rule: a host other
    than loopback is refused without one, by `ServerSettings`)."""
    app: Any = gym.server().streamable_http_app(streamable_http_path=HTTP_PATH, host=listen.host)
    if listen.token:
        app = BearerToken(app, listen.token)  # the ASGI guard `gym serve` uses
    config = uvicorn.Config(
        app, host=listen.host, port=listen.port, log_level="warning", access_log=False
    )
    return _HttpServer(config)


def _exit_cleanly(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def serve(gym: McpGym, transport: str = "stdio", listen: ServerSettings | None = None) -> int:
    """Run until the client goes (stdio) or Ctrl-C / SIGTERM (HTTP); 0, or 1 if HTTP could not
    start. Any tool process left is killed on the way out."""
    if transport == "stdio":
        _say(f"serving {gym.label} over stdio")
        anyio.run(serve_stdio, gym)
        return 0
    srv = http_server(gym, listen or ServerSettings())
    _say(f"serving {gym.label}")
    # uvicorn re-raises SIGTERM once it has shut down (the calls cancelled, their children
    # killed); this handler, which it restores first, makes that a clean exit, not a death by
    # signal that would skip the last sweep below.
    previous = signal.signal(signal.SIGTERM, _exit_cleanly)
    try:
        srv.run()
    except SystemExit as stop:
        if stop.code not in (0, None):  # uvicorn's own exit: it could not start
            return 1
    finally:
        signal.signal(signal.SIGTERM, previous)
        kill_children()
        _say_refused(gym)
    return 0 if srv.started else 1
