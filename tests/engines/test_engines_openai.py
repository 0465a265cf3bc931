"""The OpenAI-compatible engine against a real HTTP server on 127.0.0.1 (no mocked transport)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from codesearch_core.engines.base import MAX_N, SamplingSettings
from codesearch_core.engines.openai_engine import OpenAIEngine, OpenAISettings, _retry_after
from codesearch_core.engines.repair import LENGTH_ERROR
from codesearch_core.errors import EngineError
from codesearch_core.models import Blueprint, Proposal, Span
from codesearch_core.tools import OPENAI_TOOLS
from codesearch_core.tools.schemas import TOOL_CALL_SCHEMA, parse_tool_call

GOOD_CALL = {"name": "ripgrep_search", "arguments": {"pattern": "TODO", "file_types": ["py"]}}


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict → JSON; str → sent as is
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


def completion(
    n: int, content: str = json.dumps(GOOD_CALL), finish: str = "stop"
) -> dict[str, Any]:
    return {
        "id": "cmpl-1",
        "object": "chat.completion",
        "choices": [
            {
                "index": i,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish,
            }
            for i in range(n)
        ],
        "usage": {"prompt_tokens": 42, "completion_tokens": 7 * n, "total_tokens": 42 + 7 * n},
    }


class FakeServer:
    """Answers POST /v1/chat/completions from a script of replies; records every request."""

    def __init__(self) -> None:
        self.script: list[Reply | Callable[[dict[str, Any]], Reply]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                with server.lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    action = server.script.pop(0) if server.script else None
                try:
                    reply = action(body) if callable(action) else action
                    reply = reply or Reply(body=completion(body.get("n", 1)))
                    if reply.delay_s:
                        time.sleep(reply.delay_s)
                    payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                    data = payload.encode()
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and hung up: that is the point of some tests
                finally:
                    with server.lock:
                        server.in_flight -= 1

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[FakeServer]:
    s = FakeServer()
    yield s
    s.close()


@pytest.fixture
def second_server() -> Iterator[FakeServer]:
    s = FakeServer()
    yield s
    s.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def engine(*urls: str, **overrides: Any) -> OpenAIEngine:
    settings: dict[str, Any] = {
        "base_urls": urls,
        "model": "tiny",
        "max_attempts": 3,
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.05,
        "timeout_s": 5.0,
    }
    settings.update(overrides)
    return OpenAIEngine(OpenAISettings(**settings))


def blueprints(count: int = 1) -> list[Blueprint]:
    call = parse_tool_call(GOOD_CALL)
    return [
        Blueprint(f"bp{i}", f"find TODO markers #{i}", call, "c", (Span("a.py", 1, 1),), "python")
        for i in range(count)
    ]


def test_proposals_carry_the_call_tokens_prompt_and_sampling(server: FakeServer) -> None:
    settings = SamplingSettings(temperature=0.2, top_p=0.9, max_tokens=128, seed=7)
    proposals = engine(server.url).propose(blueprints(), n=1, settings=settings)
    assert len(proposals) == 1
    p = proposals[0]
    assert p.valid and p.call is not None and p.call.to_dict() == GOOD_CALL
    assert (p.engine, p.model, p.blueprint_id) == ("openai", "tiny", "bp0")
    assert (p.prompt_tokens, p.completion_tokens, p.finish_reason) == (42, 7, "stop")
    assert p.sampling == {
        "n": 1,
        "temperature": 0.2,
        "top_p": 0.9,
        "max_tokens": 128,
        "seed": 7,
        "schema_mode": "tools",
        "tool_format": "hermes",
    }
    # The fake server has no tool parser and its model no markers: the bare call is kept, and
    # the missing markers are recorded.
    assert p.repairs == ("<tool_call> missing",)
    assert json.loads(p.prompt)[-1] == {"role": "user", "content": "find TODO markers #0"}
    assert p.latency_s > 0


def test_request_sends_the_tools_strict_with_a_required_call_by_default(
    server: FakeServer,
) -> None:
    engine(server.url).propose(blueprints(), n=1)
    body = server.requests[0]
    assert [t["function"]["name"] for t in body["tools"]] == [
        t["function"]["name"] for t in OPENAI_TOOLS
    ]
    assert all(t["function"]["strict"] is True for t in body["tools"])
    assert body["tools"][0]["function"]["parameters"] == OPENAI_TOOLS[0]["function"]["parameters"]
    assert (body["tool_choice"], body["parallel_tool_calls"]) == ("required", False)
    assert "response_format" not in body and "structured_outputs" not in body
    # The tools reach the model through its chat template, not as text in the system prompt.
    system = body["messages"][0]["content"]
    assert "ripgrep_search" in system and "arguments:" not in system


def test_tools_compact_sends_a_structural_tag_for_the_models_markers(server: FakeServer) -> None:
    engine(server.url, schema_mode="tools_compact").propose(blueprints(), n=1)
    body = server.requests[0]
    assert body["tool_choice"] == "auto"
    assert not any("strict" in t["function"] for t in body["tools"])
    tag = json.loads(body["structured_outputs"]["structural_tag"])
    assert tag["format"]["begin"] == "<tool_call>\n" and tag["format"]["end"] == "\n</tool_call>"
    assert tag["format"]["content"]["type"] == "grammar"


def test_tools_compact_needs_a_format_with_markers() -> None:
    with pytest.raises(EngineError, match="tools_compact needs a tool format with markers"):
        OpenAISettings(
            base_urls=("http://x/v1",),
            model="m",
            schema_mode="tools_compact",
            tool_format="llama3_json",
        )


def test_request_enforces_the_schema_with_response_format(server: FakeServer) -> None:
    engine(server.url, api_key="sk-test", schema_mode="response_format").propose(blueprints(), n=3)
    body = server.requests[0]
    assert body["model"] == "tiny" and body["n"] == 3
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "tool_call", "schema": TOOL_CALL_SCHEMA, "strict": True},
    }
    assert "structured_outputs" not in body
    assert server.headers[0]["Authorization"] == "Bearer sk-test"


def test_request_enforces_the_schema_with_vllm_structured_outputs(server: FakeServer) -> None:
    engine(server.url, schema_mode="structured_outputs").propose(blueprints(), n=1)
    body = server.requests[0]
    assert body["structured_outputs"] == {"json": TOOL_CALL_SCHEMA}
    assert "response_format" not in body


def test_n_choices_become_n_proposals_with_unknown_per_choice_tokens(server: FakeServer) -> None:
    proposals = engine(server.url).propose(blueprints(), n=3)
    assert len(proposals) == 3
    assert {p.completion_tokens for p in proposals} == {None}
    assert {p.prompt_tokens for p in proposals} == {42}


def test_429_is_retried_and_then_succeeds(server: FakeServer) -> None:
    server.script = [Reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "0"})]
    proposals = engine(server.url).propose(blueprints(), n=1)
    assert len(server.requests) == 2
    assert proposals[0].valid


def test_5xx_is_retried_up_to_max_attempts_then_kept_as_an_invalid_proposal(
    server: FakeServer,
) -> None:
    server.script = [Reply(500, {"error": {"message": "boom"}}) for _ in range(3)]
    proposals = engine(server.url).propose(blueprints(), n=2)
    assert len(server.requests) == 3
    assert len(proposals) == 1
    p = proposals[0]
    assert not p.valid and p.call is None and p.raw_text == ""
    assert (
        p.error == f"{server.url}: HTTP 500 Internal Server Error: boom (gave up after 3 attempts)"
    )
    assert p.prompt  # the prompt that was sent is kept


def test_a_slow_server_times_out_and_is_retried(server: FakeServer) -> None:
    server.script = [Reply(body=completion(1), delay_s=1.0)]
    proposals = engine(server.url, timeout_s=0.3).propose(blueprints(), n=1)
    assert len(server.requests) == 2
    assert proposals[0].valid


def test_a_server_that_never_answers_in_time_gives_a_timeout_error(server: FakeServer) -> None:
    server.script = [Reply(body=completion(1), delay_s=1.0) for _ in range(2)]
    proposals = engine(server.url, timeout_s=0.2, max_attempts=2).propose(blueprints(), n=1)
    assert proposals[0].error == (
        f"{server.url}: no answer within 0.2 s (gave up after 2 attempts)"
    )


def test_a_malformed_json_body_is_retried(server: FakeServer) -> None:
    server.script = [Reply(200, '{"choices": [')]
    proposals = engine(server.url).propose(blueprints(), n=1)
    assert len(server.requests) == 2
    assert proposals[0].valid


def test_malformed_bodies_every_time_say_so(server: FakeServer) -> None:
    server.script = [Reply(200, "<html>proxy error</html>") for _ in range(3)]
    (p,) = engine(server.url).propose(blueprints(), n=1)
    assert not p.valid
    assert "answered 200 with a body that is not JSON: '<html>proxy error</html>'" in p.error


def test_400_is_not_retried_and_keeps_the_servers_message(server: FakeServer) -> None:
    message = "This model's maximum context length is 2048 tokens"
    server.script = [Reply(400, {"error": {"message": message}})]
    (p,) = engine(server.url).propose(blueprints(), n=1)
    assert len(server.requests) == 1
    assert p.error == f"{server.url}/chat/completions: HTTP 400 Bad Request: {message}"


def test_401_stops_the_run_with_advice(server: FakeServer) -> None:
    server.script = [Reply(401, {"error": {"message": "invalid api key"}})]
    with pytest.raises(
        EngineError, match=r"HTTP 401 Unauthorized: invalid api key: check the API key"
    ):
        engine(server.url).propose(blueprints(), n=1)
    assert len(server.requests) == 1


def test_404_says_to_check_the_model_and_base_url(server: FakeServer) -> None:
    server.script = [Reply(404, {"detail": "Not Found"})]
    with pytest.raises(EngineError, match="base URL ends in /v1"):
        engine(server.url).propose(blueprints(), n=1)


def test_unreachable_server_is_a_clear_error() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(EngineError) as err:
        engine(url, max_attempts=2).propose(blueprints(), n=1)
    assert str(err.value) == (
        f"cannot reach {url}: connection refused — is `vllm serve` running there?"
    )


def test_requests_are_spread_round_robin_over_replicas(
    server: FakeServer, second_server: FakeServer
) -> None:
    proposals = engine(server.url, second_server.url).propose(blueprints(6), n=1)
    assert len(proposals) == 6
    assert len(server.requests) == len(second_server.requests) == 3


def test_a_dead_replica_is_skipped_on_retry(server: FakeServer) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    proposals = engine(dead, server.url).propose(blueprints(4), n=1)
    assert all(p.valid for p in proposals)
    assert len(server.requests) == 4


def test_concurrency_is_limited_to_max_concurrency(server: FakeServer) -> None:
    three_in_flight = threading.Event()

    def wait_for_company(body: dict[str, Any]) -> Reply:
        with server.lock:
            if server.in_flight >= 3:
                three_in_flight.set()
        # Generous: it returns as soon as the third arrives, and a loaded machine (the fast tier
        # runs on every core) can take seconds to start the third request.
        three_in_flight.wait(timeout=60)
        return Reply(body=completion(1), delay_s=0.02)

    server.script = [wait_for_company] * 12
    proposals = engine(server.url, max_concurrency=3).propose(blueprints(12), n=1)
    assert len(proposals) == 12
    assert three_in_flight.is_set()
    assert server.max_in_flight == 3


def test_results_come_back_in_blueprint_order(server: FakeServer) -> None:
    def slower_first(body: dict[str, Any]) -> Reply:
        index = int(body["messages"][-1]["content"].rsplit("#", 1)[1])
        return Reply(body=completion(1), delay_s=0.05 * (4 - index))

    server.script = [slower_first] * 4
    proposals = engine(server.url, max_concurrency=4).propose(blueprints(4), n=1)
    assert [p.blueprint_id for p in proposals] == ["bp0", "bp1", "bp2", "bp3"]


def test_finish_reason_length_from_the_server_is_an_error_with_raw_text(server: FakeServer) -> None:
    cut = '{"name": "ripgrep_search", "arguments": {"pat'
    server.script = [Reply(body=completion(1, content=cut, finish="length"))]
    (p,) = engine(server.url).propose(blueprints(), n=1)
    assert (p.valid, p.raw_text, p.error, p.finish_reason) == (False, cut, LENGTH_ERROR, "length")


def test_tool_calls_in_the_message_are_read_when_content_is_empty(server: FakeServer) -> None:
    body = completion(1, content="")
    body["choices"][0]["message"] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": "ripgrep_search", "arguments": '{"pattern": "x"}'},
            }
        ],
    }
    server.script = [Reply(body=body)]
    (p,) = engine(server.url).propose(blueprints(), n=1)
    assert p.valid and p.call is not None and p.call.arguments == {"pattern": "x"}
    # Arguments as a JSON string is the API's form, not the model's mistake: no repair.
    assert p.repairs == ()
    assert json.loads(p.raw_text) == {"name": "ripgrep_search", "arguments": {"pattern": "x"}}


def test_a_tool_call_in_the_content_is_read_in_the_models_format(server: FakeServer) -> None:
    # A server whose parser rejected the text (or that has none) hands the text back as content.
    text = '<tool_call>\n{"name": "ripgrep_search", "arguments": {"pattern": "TODO"}}\n</tool_call>'
    server.script = [Reply(body=completion(1, content=text))]
    (p,) = engine(server.url).propose(blueprints(), n=1)
    assert p.valid and p.call is not None and p.call.arguments == {"pattern": "TODO"}
    assert p.repairs == () and p.raw_text == text


def test_progress_is_reported_and_stop_is_honoured(server: FakeServer) -> None:
    seen: list[tuple[int, int]] = []
    proposals = engine(server.url, max_concurrency=1).propose(
        blueprints(5),
        n=1,
        on_progress=lambda d, t: seen.append((d, t)),
        should_stop=lambda: len(seen) >= 2,
    )
    assert seen == [(1, 5), (2, 5)]
    assert [p.blueprint_id for p in proposals] == ["bp0", "bp1"]


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("[1, 2]", "answered 200 without a `choices` list: '[1, 2]'"),
        ('{"object": "chat.completion"}', "answered 200 without a `choices` list"),
        ('{"choices": "none"}', "answered 200 without a `choices` list"),
        ('{"choices": []}', "answered 200 with an empty `choices` list"),
        (DEEP, "answered 200 with a body that is not JSON: '[[[["),
    ],
    ids=["list", "no-choices", "choices-not-a-list", "empty-choices", "nested-too-deep"],
)
def test_an_answer_that_breaks_the_api_contract_is_retried_then_an_invalid_proposal(
    server: FakeServer, body: str, problem: str
) -> None:
    server.script = [Reply(200, body) for _ in range(3)]
    (p,) = engine(server.url).propose(blueprints(), n=1)
    assert len(server.requests) == 3
    assert not p.valid and p.raw_text == ""
    assert p.error.startswith(f"{server.url}: the server {problem}")
    assert p.error.endswith("(gave up after 3 attempts)")


def test_choices_that_are_not_messages_become_invalid_proposals(server: FakeServer) -> None:
    choices: list[Any] = [1, None, {"message": "x"}, {"message": {"content": 5}}]
    server.script = [Reply(body={"choices": choices, "usage": [1]})]
    proposals = engine(server.url).propose(blueprints(), n=4)
    assert [(p.valid, p.error) for p in proposals] == [
        (False, "empty output: the model wrote no JSON")
    ] * 4
    assert {(p.prompt_tokens, p.completion_tokens, p.finish_reason) for p in proposals} == {
        (None, None, None)
    }


def test_an_error_body_nested_too_deep_still_gives_the_status(server: FakeServer) -> None:
    server.script = [Reply(400, DEEP)]
    (p,) = engine(server.url).propose(blueprints(), n=1)
    assert p.error.startswith(f"{server.url}/chat/completions: HTTP 400 Bad Request: [[[[")


def test_a_body_that_does_not_decompress_is_retried_then_kept_as_an_error(
    server: FakeServer,
) -> None:
    server.script = [Reply(200, "not gzip", {"Content-Encoding": "gzip"}) for _ in range(3)]
    (p,) = engine(server.url).propose(blueprints(), n=1)
    assert len(server.requests) == 3
    assert p.error.startswith(f"{server.url}: bad response: DecodingError: ")
    assert p.error.endswith("(gave up after 3 attempts)")


class _SurprisedEngine(OpenAIEngine):
    """Fails as code that did not foresee an answer would: inside the worker, for bp0 only."""

    def _proposals(self, blueprint: Blueprint, *args: Any) -> list[Proposal]:
        if blueprint.id == "bp0":
            raise KeyError("logprobs")
        return super()._proposals(blueprint, *args)


def test_an_unforeseen_error_in_a_worker_costs_one_blueprint_not_the_run(
    server: FakeServer,
) -> None:
    settings = engine(server.url).settings
    proposals = _SurprisedEngine(settings).propose(blueprints(3), n=1)
    assert [(p.blueprint_id, p.valid) for p in proposals] == [
        ("bp0", False),
        ("bp1", True),
        ("bp2", True),
    ]
    assert proposals[0].error == "unexpected KeyError handling the server's answer: 'logprobs'"


def test_n_is_capped_before_any_request(server: FakeServer) -> None:
    with pytest.raises(EngineError, match=f"must be at most {MAX_N}, got {MAX_N + 1}"):
        engine(server.url).propose(blueprints(), n=MAX_N + 1)
    assert server.requests == []
    assert len(engine(server.url).propose(blueprints(), n=MAX_N)) == MAX_N
    assert server.requests[0]["n"] == MAX_N


def test_backoff_grows_exponentially_with_jitter_and_is_capped() -> None:
    e = engine("http://127.0.0.1:1/v1", backoff_base_s=1.0, backoff_max_s=5.0)
    for attempt, ceiling in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 5.0), (10, 5.0)]:
        delays = [e._backoff(attempt, None) for _ in range(50)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(set(delays)) > 1  # jittered
    assert e._backoff(0, 2.5) == 2.5  # Retry-After wins...
    assert e._backoff(0, 60.0) == 5.0  # ...up to the cap


def test_retry_after_accepts_seconds_and_http_dates() -> None:
    import httpx

    def response(value: str) -> httpx.Response:
        return httpx.Response(429, headers={"Retry-After": value})

    assert _retry_after(response("3")) == 3.0
    assert _retry_after(response("Wed, 21 Oct 2015 07:28:00 GMT")) == 0.0  # in the past
    assert _retry_after(response("soon")) is None
    assert _retry_after(httpx.Response(429)) is None


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"base_urls": ()}, "give at least one base URL"),
        ({"base_urls": ("localhost:8000/v1",)}, "must start with http://"),
        ({"model": ""}, "give the model name"),
        ({"max_concurrency": 0}, "at least 1"),
        ({"base_urls": ("http://[::1/v1",)}, "is not a valid URL: Invalid port"),
        ({"extra_body": {"stop": object()}}, "extra_body must be JSON: Object of type object"),
    ],
)
def test_bad_settings_are_refused(overrides: dict[str, Any], message: str) -> None:
    settings: dict[str, Any] = {"base_urls": ("http://127.0.0.1:8000/v1",), "model": "m"}
    settings.update(overrides)
    with pytest.raises(EngineError, match=message):
        OpenAISettings(**settings)
