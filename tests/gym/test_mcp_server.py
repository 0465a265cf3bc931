"""`codesearch mcp`, for real: the server in a child process, driven by the MCP SDK's own client
(`mcp.client.Client` over `stdio_client`, or over streamable HTTP), running the real rg /
ast-grep. A scripted agent stands in for a model: the seed's reference call, then a submit of the
locations its observation shows.

The faults: paths outside the corpus, malformed arguments, a flood of calls, a call cancelled by
its client and a client killed mid-call (a search that blocks: `rg` on a FIFO in a corpus of the
test's own, which only its timeout would end), each checked against the process tree.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx
import httpx2
import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from codesearch_core.cli import main, mcp_cmds
from codesearch_core.gym import (
    READ_FILE,
    SEARCH_TOOLS,
    SUBMIT,
    Refusal,
    Task,
    gym_tools,
    mcp_server,
)
from codesearch_core.gym.mcp_server import BUSY, NO_TASK, RATE_LIMITED, CallLimits, McpGym

REPO = Path(__file__).resolve().parents[2]
#: Hang guards, not timings: a server that has not answered by then is broken.
CALL_S = 120
TOKEN = "tok-9c2e"
_T = TypeVar("_T")


def run(fn: Callable[[], Awaitable[_T]]) -> _T:
    # In a thread of its own: in the slow tier the session's Chromium (Playwright's sync API)
    # keeps an event loop running in the main thread, where `anyio.run` refuses to start one.
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, fn).result()


def stdio(*args: str, env: dict[str, str] | None = None) -> Client:
    """A client of `codesearch mcp ARGS` started over stdio, as a harness starts it."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "codesearch_core", "mcp", *args],
        cwd=str(REPO),
        env=env,
    )
    return Client(stdio_client(params), read_timeout_seconds=CALL_S)


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def shown_locations(observation: str) -> list[dict[str, Any]]:
    """The locations a search's observation shows (`path:line: text`), as a submit names them."""
    return [
        {"path": m[1], "start_line": int(m[2]), "end_line": int(m[2])}
        for m in re.finditer(r"^([^\s:]+):(\d+):", observation, re.MULTILINE)
    ]


@pytest.fixture(scope="module")
def slow_corpora(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Corpora holding `slow`: a file, and a FIFO that no one writes, so that `rg` on it blocks
    until killed (or the gym's timeout, 10 s, far past what the tests wait)."""
    root = tmp_path_factory.mktemp("corpora")
    (root / "slow").mkdir()
    (root / "slow" / "a.txt").write_text("hello x\n")
    os.mkfifo(root / "slow" / "pipe.txt")
    (root / "other").mkdir()
    (root / "other" / "secret.txt").write_text("x marks the spot\n")
    return root


def _processes() -> dict[int, tuple[int, str]]:
    """Every process: pid -> (parent pid, command name)."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            raw = stat.read_text()
        except OSError:
            continue
        name = raw[raw.index("(") + 1 : raw.rindex(")")]
        found[int(stat.parent.name)] = (int(raw[raw.rindex(")") + 2 :].split()[1]), name)
    return found


def _descendants(pid: int) -> list[tuple[int, str]]:
    procs = _processes()
    out: list[tuple[int, str]] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        for child, (ppid, name) in procs.items():
            if ppid == parent:
                out.append((child, name))
                todo.append(child)
    return out


def _mcp_servers_of(pid: int) -> list[int]:
    """The `codesearch mcp` processes `pid` started (stdio_client's child)."""
    found = []
    for child, (ppid, _) in _processes().items():
        if ppid == pid:
            try:
                argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"mcp" in argv:
                found.append(child)
    return found


def _tools_of(pid: int) -> list[tuple[int, str]]:
    return [(p, n) for p, n in _descendants(pid) if n in ("rg", "ast-grep", "sg")]


def _wait_for(check: Callable[[], bool], timeout_s: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


# --- a task ----------------------------------------------------------------------------------------


def test_a_seed_task_played_through_the_sdks_client_earns_1(single_task: Task) -> None:
    bp = single_task.blueprint

    async def play() -> None:
        async with stdio("--task", bp.id) as client:
            assert client.instructions is not None and bp.intent in client.instructions
            assert "at most 16 turns; each turn is one tool call" in client.instructions
            listed = {t.name: t for t in (await client.list_tools()).tools}
            gym = {t["function"]["name"]: t["function"] for t in gym_tools()}
            assert set(listed) == set(gym)
            for name, tool in listed.items():  # the gym's own schemas, and what counts, said
                assert tool.input_schema == gym[name]["parameters"]
                assert "one turn of the episode" in (tool.description or "")

            searched = await client.call_tool(
                bp.reference_call.name.value, bp.reference_call.arguments
            )
            assert not searched.is_error, text(searched)
            locations = shown_locations(text(searched))
            assert searched.structured_content["findings"] == len(locations) > 0
            assert searched.structured_content["turns_left"] == mcp_server.MCP_MAX_TURNS - 1

            submitted = await client.call_tool(SUBMIT, {"locations": locations})
            assert not submitted.is_error, text(submitted)
            assert submitted.structured_content["done"] is True
            assert submitted.structured_content["reward"] == 1.0
            assert set(submitted.structured_content["components"]) >= {"R_find", "R_scope"}
            assert "reward 1.000" in text(submitted)

            again = await client.call_tool(
                bp.reference_call.name.value, bp.reference_call.arguments
            )
            assert again.is_error and again.structured_content["error"] == Refusal.EPISODE_OVER
            assert "the episode is over" in text(again)

    run(play)


def test_an_unknown_task_is_refused_before_serving(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "--task", "no-such-blueprint"]) == 2
    assert "no task 'no-such-blueprint'" in capsys.readouterr().err


# --- a corpus, and what a client may get wrong ------------------------------------------------------


def test_a_corpus_server_explores_and_refuses_what_the_gym_refuses(slow_corpora: Path) -> None:
    env = {"CODESEARCH_CORPORA": str(slow_corpora)}

    async def explore() -> None:
        async with stdio("--corpus", "slow", env=env) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == SEARCH_TOOLS | {READ_FILE}  # no task: no submit
            found = await client.call_tool(
                "ripgrep_search", {"pattern": "hello", "paths": ["a.txt"]}
            )
            assert not found.is_error and "a.txt:1:" in text(found)
            read = await client.call_tool(READ_FILE, {"path": "a.txt"})
            assert not read.is_error and "hello x" in text(read)
            outside, invalid = Refusal.PATH_OUTSIDE_CORPUS, Refusal.INVALID_ARGUMENTS
            other = str(slow_corpora / "other")
            refused = {  # why: (tool, arguments, the refusal's kind)
                "another corpus, by ..": (READ_FILE, {"path": "../other/secret.txt"}, outside),
                "another corpus, absolute": ("ripgrep_search", {"pattern": "x", "paths": [other]},
                                             outside),
                "a corpus argument": ("ripgrep_search", {"pattern": "x", "corpus": "other"},
                                      invalid),
                "a pattern not a string": ("ripgrep_search", {"pattern": ["x"]}, invalid),
                "a line not a number": (READ_FILE, {"path": "a.txt", "start_line": "one"}, invalid),
                "an unknown tool": ("rm_rf", {}, Refusal.UNKNOWN_TOOL),
                "a submit with no task": (SUBMIT, {"locations": []}, NO_TASK),
            }  # fmt: skip
            for why, (name, arguments, kind) in refused.items():
                result = await client.call_tool(name, arguments)
                assert result.is_error, why
                assert result.structured_content["error"] == kind, (why, text(result))
                assert text(result).startswith(f"error ({kind}): "), why
                assert "x marks the spot" not in text(result), why
            still = await client.call_tool(READ_FILE, {"path": "a.txt"})  # none of it hurt
            assert not still.is_error

    run(explore)


def test_a_call_the_client_cancels_has_its_search_killed(slow_corpora: Path) -> None:
    env = {"CODESEARCH_CORPORA": str(slow_corpora)}

    async def cancel() -> None:
        async with stdio("--corpus", "slow", env=env) as client:
            (server,) = _mcp_servers_of(os.getpid())
            async with anyio.create_task_group() as tg:

                async def blocked() -> None:
                    await client.call_tool(
                        "ripgrep_search", {"pattern": "x", "paths": ["pipe.txt"]}
                    )

                tg.start_soon(blocked)
                started = await anyio.to_thread.run_sync(
                    lambda: _wait_for(lambda: bool(_tools_of(server)))
                )
                tg.cancel_scope.cancel()  # the SDK tells the server the call is cancelled
            assert started, "no rg started under the server"
            gone = await anyio.to_thread.run_sync(
                lambda: _wait_for(lambda: not _tools_of(server), 5)
            )
            assert gone, _tools_of(server)  # killed, not left to its 10 s timeout
            after = await client.call_tool(READ_FILE, {"path": "a.txt"})
            assert not after.is_error  # the server is fine

    run(cancel)


CLIENT = textwrap.dedent(
    """
    import os, sys, anyio
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def main():
        target = sys.argv[1]  # a server's URL, or the repository to start one in over stdio
        if not target.startswith("http"):
            target = stdio_client(StdioServerParameters(command=sys.executable,
                args=["-m", "codesearch_core", "mcp", "--corpus", "slow"], cwd=target,
                env={"CODESEARCH_CORPORA": os.environ["CODESEARCH_CORPORA"]}))
        async with Client(target) as client:
            print("connected", flush=True)
            await client.call_tool("ripgrep_search", {"pattern": "x", "paths": ["pipe.txt"]})

    anyio.run(main)
    """
)


@pytest.mark.slow
def test_a_client_killed_mid_call_leaves_no_tool_process(slow_corpora: Path) -> None:
    env = {**os.environ, "CODESEARCH_CORPORA": str(slow_corpora)}
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT, str(REPO)], cwd=REPO, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        assert client.stdout is not None and client.stdout.readline().strip() == "connected"
        assert _wait_for(lambda: bool(_tools_of(client.pid))), _descendants(client.pid)
        server = _mcp_servers_of(client.pid)
        assert len(server) == 1
        client.kill()  # no goodbye: the server's stdin just closes
        client.wait(CALL_S)
        # The server notices, kills its rg and exits: well before the search's 10 s timeout.
        assert _wait_for(lambda: server[0] not in _processes(), 5), _descendants(server[0])
        rg_left = [p for p, (_, name) in _processes().items() if name == "rg"
                   and Path(f"/proc/{p}/cwd").resolve() == (slow_corpora / "slow")]  # fmt: skip
        assert rg_left == []
    finally:
        if client.poll() is None:
            client.kill()


@pytest.mark.slow
def test_an_http_client_killed_mid_call_has_its_search_killed(slow_corpora: Path) -> None:
    env = {"CODESEARCH_CORPORA": str(slow_corpora), "CODESEARCH_GYM_TOKEN": ""}
    server, url, said = start_http("--corpus", "slow", env=env)
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT, url], cwd=REPO, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        assert url.startswith("http://"), "".join(said)
        assert client.stdout is not None and client.stdout.readline().strip() == "connected"
        assert _wait_for(lambda: bool(_tools_of(server.pid))), _descendants(server.pid)
        client.kill()  # its request's connection drops: the server cancels the call
        client.wait(CALL_S)
        assert _wait_for(lambda: not _tools_of(server.pid), 5), _tools_of(server.pid)
        assert server.poll() is None  # and serves on
    finally:
        if client.poll() is None:
            client.kill()
        assert stop(server) == 0, said


@pytest.mark.slow
def test_a_flood_of_1000_calls_is_refused_past_the_bounds_not_queued(slow_corpora: Path) -> None:
    env = {"CODESEARCH_CORPORA": str(slow_corpora)}
    limits = CallLimits()

    async def flood() -> None:
        async with stdio("--corpus", "slow", env=env) as client:
            results: list[types.CallToolResult] = []

            async def one() -> None:
                results.append(await client.call_tool("ripgrep_search", {"pattern": "hello"}))

            started = time.monotonic()
            async with anyio.create_task_group() as tg:
                for _ in range(1000):
                    tg.start_soon(one)
            elapsed = time.monotonic() - started
            ran = [r for r in results if not r.is_error]
            refused = [r for r in results if r.is_error]
            assert len(results) == 1000
            assert {r.structured_content["error"] for r in refused} <= {BUSY, RATE_LIMITED}
            assert refused and all("was not run" in text(r) for r in refused)
            # No more ran than the bucket and its refill allow: the rest were refused, not queued.
            assert len(ran) <= limits.per_second * (1 + elapsed) + 1
            assert all("a.txt:1:" in text(r) for r in ran)
            await anyio.sleep(1.1)  # the bucket refills: the server serves again
            after = await client.call_tool("ripgrep_search", {"pattern": "hello"})
            assert not after.is_error

    run(flood)


# --- streamable HTTP ------------------------------------------------------------------------------


def start_http(*args: str, env: dict[str, str]) -> tuple[subprocess.Popen[str], str, list[str]]:
    """`codesearch mcp ARGS --transport http --port 0` in its own session: the process, its URL
    (from what it says on stderr) and every line it said."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "codesearch_core", "mcp", *args, "--transport", "http",
         "--port", "0"], cwd=REPO, env={**os.environ, **env}, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    assert proc.stderr is not None
    said: list[str] = []
    for line in proc.stderr:  # until it listens (or exits: then the caller's assert says why)
        said.append(line)
        if "streamable HTTP on " in line:
            break
    threading.Thread(target=lambda: said.extend(proc.stderr or ()), daemon=True).start()
    url = said[-1].split("streamable HTTP on ", 1)[-1].strip() if said else ""
    return proc, url, said


def stop(proc: subprocess.Popen[str]) -> int:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    return proc.wait(CALL_S)


@pytest.fixture
def served(single_task: Task) -> Iterator[tuple[subprocess.Popen[str], str, list[str]]]:
    """A task server over streamable HTTP with a token."""
    proc, url, said = start_http(
        "--task", single_task.blueprint.id, env={"CODESEARCH_GYM_TOKEN": TOKEN}
    )
    try:
        assert url.startswith("http://"), "".join(said)
        yield proc, url, said
    finally:
        stop(proc)


@pytest.mark.slow
def test_over_streamable_http_with_a_token_the_task_earns_1(
    served: tuple[subprocess.Popen[str], str, list[str]], single_task: Task
) -> None:
    proc, url, said = served
    bp = single_task.blueprint
    assert httpx.post(url, json={}).status_code == 401  # no token, no call

    async def play() -> None:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        http = httpx2.AsyncClient(headers=headers, timeout=CALL_S)
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            searched = await client.call_tool(
                bp.reference_call.name.value, bp.reference_call.arguments
            )
            submitted = await client.call_tool(
                SUBMIT, {"locations": shown_locations(text(searched))}
            )
            assert submitted.structured_content["reward"] == 1.0, text(submitted)
        # A 2025-11-25 client keeps an Mcp-Session-Id: each such session plays its own episode.
        read = {"path": bp.expected[0].path}
        one, two = (httpx2.AsyncClient(headers=headers, timeout=CALL_S) for _ in range(2))
        async with (
            one,
            two,
            Client(streamable_http_client(url, http_client=one), mode="legacy") as first,
            Client(streamable_http_client(url, http_client=two), mode="legacy") as second,
        ):
            assert first.protocol_version == second.protocol_version == "2025-11-25"
            turns = [
                (await client.call_tool(READ_FILE, read)).structured_content["turns_used"]
                for client in (first, first, second)
            ]
            assert turns == [1, 2, 1]

    run(play)
    assert stop(proc) == 0
    assert not [line for line in said if "Traceback" in line], said


def test_a_non_loopback_bind_without_a_token_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODESEARCH_GYM_TOKEN", raising=False)
    assert main(["mcp", "--corpus", "webshop", "--transport", "http", "--host", "0.0.0.0"]) == 2
    assert "without a token" in capsys.readouterr().err


def test_the_clis_defaults_are_the_servers() -> None:
    gym = McpGym.for_corpus("webshop", REPO / "data" / "corpora" / "webshop")
    assert mcp_cmds.DEFAULT_MAX_TURNS == mcp_server.MCP_MAX_TURNS == gym.settings.max_turns
    assert CallLimits().max_in_flight == mcp_cmds.DEFAULT_MAX_IN_FLIGHT
    assert CallLimits().per_second == mcp_cmds.DEFAULT_RATE
    with pytest.raises(ValueError, match="max_in_flight"):
        CallLimits(max_in_flight=0)
