"""What the gym's OpenEnv server adds to a step (`codesearch gym serve`, `gym.openenv_server`),
over its WebSocket and over plain-HTTP sessions (`gym.openenv_sessions`), one client and 64.

Run: `uv run python benchmarks/bench_gym_server.py [--reps 3] [--limit N] [--sessions 64]
[--rounds 3]`.

The server runs as `codesearch gym serve --port 0` in its own process on localhost.

One client: for every single-call seed blueprint, on a fresh episode each time (the reset is not
timed), the turn of its reference call with `Episode.step` in this process, through one OpenEnv
WebSocket client (`CodeSearchEnvClient`, the sync wrapper a trainer's rollout loop uses) and
through one plain-HTTP session (`/session/step` on a kept-alive httpx connection), interleaved;
and an empty-handed turn (one call to an unknown tool: no search, so only the transport and the
(de)serialization are left). The overhead is the median over the seeds of (server step -
in-process step), paired per seed and repetition; goal (issue 27) at most 5 ms a step.

64 sessions: `--sessions` clients at once in one asyncio loop, each its own session and
connection, each playing `--steps` episodes of one timed turn (reset not timed), all started
together; the transports take turns, round after round, so all see the same load. Three clients:
OpenEnv's async WebSocket client; `/session/*` over bare HTTP/1.1 on asyncio streams (no client
library: like the WebSocket client's framing, next to no cost, so the figure is the server's);
and `/session/*` through aiohttp, a client a trainer would use (its own per-request work, all
64 sessions' in one loop, is part of its figure). Per-step medians and p90, and steps a second
(steps and untimed resets alike, from the moment all sessions are connected).
The goal (issue 40): plain HTTP with sessions within 2 ms of the WebSocket per step, as the
difference of the paired medians (one client) and of the medians (64 sessions, bare HTTP).
Writes benchmarks/results/gym_server.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import httpx

from codesearch_core.gym import Episode, Task, as_tasks, seed_blueprints
from codesearch_core.gym.openenv_client import CodeSearchEnvClient
from codesearch_core.gym.openenv_server import CodeSearchAction

REPO = Path(__file__).resolve().parents[1]
GOAL_MS = 5.0
#: Plain HTTP with sessions against the WebSocket, per step (issue 40).
HTTP_GOAL_MS = 2.0
NO_TOOL = [{"name": "no_such_tool", "arguments": {}}]
MS = 1000.0
TRANSPORTS = {
    "websocket": "WebSocket (OpenEnv's client)",
    "http": "plain HTTP (bare HTTP/1.1)",
    "aiohttp": "plain HTTP (aiohttp)",
}

Calls = Callable[[Task], list[Any]]


def reference_calls(task: Task) -> list[Any]:
    return [task.blueprint.reference_call.to_dict()]


def no_search(task: Task) -> list[Any]:
    return NO_TOOL


def start_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "codesearch_core", "gym", "serve", "--port", "0",
         "--blueprints", "seeds-all"],  # the tasks `seed_blueprints()` gives below
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stderr is not None
    for line in proc.stderr:
        if "listening on " in line:
            # Keep reading its stderr, so a chatty server never blocks on a full pipe.
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc, line.split("listening on ", 1)[1].split()[0]
    raise SystemExit(f"the server did not start (exit status {proc.wait()})")


# --- one client ----------------------------------------------------------------------------------


def in_process(task: Task, calls: list[Any]) -> float:
    episode = Episode(task.blueprint, task.corpus_root)
    started = time.perf_counter()
    episode.step(calls)
    elapsed = time.perf_counter() - started
    episode.stop()
    return elapsed


def over_websocket(env: Any, task: Task, calls: list[Any]) -> float:
    env.reset(blueprint_id=task.blueprint.id)
    action = CodeSearchAction(calls=calls)
    started = time.perf_counter()
    env.step(action)
    return time.perf_counter() - started


def reset_body(task: Task, sid: str) -> dict[str, Any]:
    """`/session/reset`'s body: the task's episode, in session `sid` (a new session if empty)."""
    return {"blueprint_id": task.blueprint.id, **({"session_id": sid} if sid else {})}


class HttpSession:
    """One plain-HTTP session on one kept-alive connection."""

    def __init__(self, url: str) -> None:
        self.client = httpx.Client(base_url=url, timeout=600)
        self.sid = ""

    def reset(self, task: Task) -> None:
        answer = self.client.post("/session/reset", json=reset_body(task, self.sid))
        answer.raise_for_status()
        self.sid = answer.json()["session_id"]

    def step(self, calls: list[Any]) -> dict[str, Any]:
        body = {"session_id": self.sid, "action": {"calls": calls}}
        answer = self.client.post("/session/step", json=body)
        answer.raise_for_status()
        return dict(answer.json())

    def close(self) -> None:
        if self.sid:
            self.client.post("/session/close", json={"session_id": self.sid})
        self.client.close()


def over_http(session: HttpSession, task: Task, calls: list[Any]) -> float:
    session.reset(task)
    started = time.perf_counter()
    session.step(calls)
    return time.perf_counter() - started


def measure(
    env: Any, http: HttpSession, tasks: list[Task], reps: int, calls_of: Calls
) -> dict[str, dict[str, float]]:
    """Per seed and repetition, interleaved: in process, over the WebSocket, over HTTP."""
    local: list[float] = []
    ws: list[float] = []
    plain: list[float] = []
    for _ in range(reps):
        for task in tasks:
            calls = calls_of(task)
            local.append(in_process(task, calls))
            ws.append(over_websocket(env, task, calls))
            plain.append(over_http(http, task, calls))
    return {
        "websocket": _overhead(local, ws),
        "http": _overhead(local, plain),
        "http_vs_ws": _overhead(ws, plain),
    }


def _overhead(base: list[float], other: list[float]) -> dict[str, float]:
    diffs = [b - a for a, b in zip(base, other, strict=True)]
    return {
        "in_process": statistics.median(base) * MS,
        "server": statistics.median(other) * MS,
        "overhead": statistics.median(diffs) * MS,
        "p90_overhead": statistics.quantiles(diffs, n=10)[-1] * MS if len(diffs) > 1 else 0.0,
        "steps": float(len(diffs)),
    }


# --- many sessions at once -----------------------------------------------------------------------


async def ws_player(
    url: str, tasks: list[Task], calls_of: Calls, start: Start, out: list[float]
) -> None:
    async with CodeSearchEnvClient(url) as env:
        await start.wait()
        for task in tasks:
            await env.reset(blueprint_id=task.blueprint.id)
            action = CodeSearchAction(calls=calls_of(task))
            started = time.perf_counter()
            await env.step(action)
            out.append(time.perf_counter() - started)


async def http_player(
    url: str, tasks: list[Task], calls_of: Calls, start: Start, out: list[float]
) -> None:
    # A client library as a trainer would use one. aiohttp, not httpx: with 16 sessions in one
    # loop, httpx's async client took ~80 ms a request on this machine (its per-request work,
    # every session's in the same loop), aiohttp 10-40 ms.
    async with aiohttp.ClientSession(url, raise_for_status=True) as client:
        sid = ""
        await start.wait()
        for task in tasks:
            async with client.post("/session/reset", json=reset_body(task, sid)) as answer:
                sid = (await answer.json())["session_id"]
            step = {"session_id": sid, "action": {"calls": calls_of(task)}}
            started = time.perf_counter()
            async with client.post("/session/step", json=step) as answer:
                await answer.read()
            out.append(time.perf_counter() - started)
        async with client.post("/session/close", json={"session_id": sid}) as answer:
            await answer.read()


class Start:
    """Every session connected, then all go at once; the wall time counts from then (connecting
    64 WebSockets is not a step)."""

    def __init__(self, sessions: int) -> None:
        self.barrier = asyncio.Barrier(sessions)
        self.at = 0.0

    async def wait(self) -> None:
        await self.barrier.wait()
        self.at = self.at or time.perf_counter()


class BareHttp:
    """HTTP/1.1 on one kept-alive asyncio connection, no client library: a request's bytes out,
    the answer read by its Content-Length. What is left of a step is then the server's own work,
    as with the WebSocket client, whose framing costs next to nothing."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, url: str) -> BareHttp:
        host, port = url.split("://", 1)[1].rsplit(":", 1)
        return cls(*await asyncio.open_connection(host, int(port)))

    async def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        data = json.dumps(body).encode()
        head = (f"POST {path} HTTP/1.1\r\nhost: bench\r\ncontent-type: application/json\r\n"
                f"content-length: {len(data)}\r\n\r\n")  # fmt: skip
        self.writer.write(head.encode() + data)
        lines = (await self.reader.readuntil(b"\r\n\r\n")).decode().split("\r\n")
        if not lines[0].startswith("HTTP/1.1 200"):
            raise RuntimeError(f"{path}: {lines[0]}")
        size = next(int(h.split(":")[1]) for h in lines if h.lower().startswith("content-length"))
        return dict(json.loads(await self.reader.readexactly(size)))

    def close(self) -> None:
        self.writer.close()


async def bare_http_player(
    url: str, tasks: list[Task], calls_of: Calls, start: Start, out: list[float]
) -> None:
    client = await BareHttp.open(url)
    try:
        sid = ""
        await start.wait()
        for task in tasks:
            sid = (await client.post("/session/reset", reset_body(task, sid)))["session_id"]
            step = {"session_id": sid, "action": {"calls": calls_of(task)}}
            started = time.perf_counter()
            await client.post("/session/step", step)
            out.append(time.perf_counter() - started)
        await client.post("/session/close", {"session_id": sid})
    finally:
        client.close()


async def one_round(
    url: str, player: Any, tasks: list[Task], sessions: int, steps: int, calls_of: Calls
) -> tuple[list[float], float]:
    """`sessions` players at once, each `steps` turns of its own tasks; per-step times, wall."""
    start = Start(sessions)
    out: list[float] = []
    mine = [[tasks[(i * steps + j) % len(tasks)] for j in range(steps)] for i in range(sessions)]
    await asyncio.gather(*(player(url, m, calls_of, start, out) for m in mine))
    return out, time.perf_counter() - start.at


def concurrent(
    url: str, tasks: list[Task], sessions: int, steps: int, rounds: int, calls_of: Calls
) -> dict[str, dict[str, float]]:
    players = {"websocket": ws_player, "http": bare_http_player, "aiohttp": http_player}
    times: dict[str, list[float]] = {name: [] for name in players}
    walls = dict.fromkeys(players, 0.0)
    for _ in range(rounds):  # the transports take turns: the same load drift for both
        for name, player in players.items():
            out, wall = asyncio.run(one_round(url, player, tasks, sessions, steps, calls_of))
            times[name] += out
            walls[name] += wall
    return {
        name: {
            "steps": float(len(t)),
            "median": statistics.median(t) * MS,
            "p90": statistics.quantiles(t, n=10)[-1] * MS,
            "per_s": len(t) / walls[name],
        }
        for name, t in times.items()
    }


# --- the report ----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--limit", type=int, default=0, help="only the first N blueprints")
    parser.add_argument("--sessions", type=int, default=64, help="sessions at once")
    parser.add_argument("--steps", type=int, default=8, help="timed turns per session per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each transport")
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args()

    tasks = [t for t in as_tasks(seed_blueprints()).tasks if t.blueprint.plan is None]
    if args.limit:
        tasks = tasks[: args.limit]
    load_before = os.getloadavg()[0]
    proc, url = start_server()
    http = HttpSession(url)
    try:
        with CodeSearchEnvClient(url).sync() as env:
            # Warm-up: binaries found, corpora in the page cache, the sessions' threads started.
            measure(env, http, tasks, 1, reference_calls)
            search = measure(env, http, tasks, args.reps, reference_calls)
            bare = measure(env, http, tasks, args.reps, no_search)
        many = {
            kind: concurrent(url, tasks, args.sessions, args.steps, args.rounds, calls_of)
            for kind, calls_of in (("no search", no_search), ("one search", reference_calls))
        }
    finally:
        http.close()
        proc.terminate()
        proc.wait(60)
    load_after = os.getloadavg()[0]
    print(report(args, tasks, search, bare, many, load_before, load_after))


def report(
    args: argparse.Namespace,
    tasks: list[Task],
    search: dict[str, dict[str, float]],
    bare: dict[str, dict[str, float]],
    many: dict[str, dict[str, dict[str, float]]],
    load_before: float,
    load_after: float,
) -> str:
    one = [
        ("the reference call (one search)", search["websocket"]),
        ("no search (an unknown tool)", bare["websocket"]),
        ("plain HTTP session: the reference call (one search)", search["http"]),
        ("plain HTTP session: no search (an unknown tool)", bare["http"]),
    ]
    gaps = [
        ("one client, no search (paired)", bare["http_vs_ws"]["overhead"]),
        ("one client, one search (paired)", search["http_vs_ws"]["overhead"]),
        *(
            (f"{args.sessions} sessions, {kind}", m["http"]["median"] - m["websocket"]["median"])
            for kind, m in many.items()
        ),
        *(
            (
                f"{args.sessions} sessions, {kind}, aiohttp's client",
                m["aiohttp"]["median"] - m["websocket"]["median"],
            )
            for kind, m in many.items()
        ),
    ]
    lines = [
        "# Gym OpenEnv server: overhead per step, WebSocket and plain-HTTP sessions",
        "",
        f"{len(tasks)} single-call seed blueprints; `codesearch gym serve` on localhost in its own "
        "process. Machine: "
        f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
        f"load average {load_before:.1f} at start, {load_after:.1f} at end.",
        "",
        f"## One client ({args.reps} repetitions, a fresh episode each step)",
        "",
        "In-process `Episode.step`, one OpenEnv WebSocket client (sync wrapper) and one plain-HTTP "
        "session (`/session/step`, kept-alive connection), interleaved. Medians in ms; the "
        "overhead is the median of the paired differences.",
        "",
        "| turn | steps | in-process `Episode.step` | through the server | overhead (median) | "
        "overhead (p90) | goal | met |",
        "|---|---:|---:|---:|---:|---:|---:|:---:|",
        *(
            f"| {name} | {r['steps']:.0f} | {r['in_process']:.2f} | {r['server']:.2f} | "
            f"{r['overhead']:.2f} | {r['p90_overhead']:.2f} | <= {GOAL_MS:.0f} | "
            f"{'yes' if r['overhead'] <= GOAL_MS else 'no'} |"
            for name, r in one
        ),
        "",
        f"## {args.sessions} sessions at once ({args.rounds} rounds of {args.steps} turns each, "
        "the transports taking turns)",
        "",
        "One asyncio loop in this process, one connection per session: OpenEnv's async "
        "WebSocket client; `/session/*` over bare HTTP/1.1 (asyncio streams, no client library: "
        "the server's own cost, as the WebSocket client's framing costs next to nothing); "
        "`/session/*` through aiohttp (a client library's own work included). Per-step times in "
        "ms; steps/s counts from the moment every session is connected.",
        "",
        "| transport | turn | sessions | steps | median | p90 | steps/s |",
        "|---|---|---:|---:|---:|---:|---:|",
        *(
            f"| {TRANSPORTS[name]} | {kind} | "
            f"{args.sessions} | {r['steps']:.0f} | {r['median']:.2f} | {r['p90']:.2f} | "
            f"{r['per_s']:.0f} |"
            for kind, m in many.items()
            for name, r in m.items()
        ),
        "",
        "## Plain HTTP with sessions against the WebSocket, per step",
        "",
        "| comparison | plain HTTP - WebSocket (ms) | goal | met |",
        "|---|---:|---:|:---:|",
        *(
            f"| {name} | {gap:.2f} | <= {HTTP_GOAL_MS:.0f} | "
            f"{'yes' if gap <= HTTP_GOAL_MS else 'no'} |"
            for name, gap in gaps
        ),
        "",
    ]
    text = "\n".join(lines)
    if not args.no_save:
        out = REPO / "benchmarks" / "results" / "gym_server.md"
        out.write_text(text, encoding="utf-8")
        text += f"\nwrote {out}"
    return text


if __name__ == "__main__":
    main()
