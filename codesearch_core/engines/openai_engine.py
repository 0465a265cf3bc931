"""Proposals from any OpenAI-compatible chat-completions server (`vllm serve`, or a hosted API).

Plain HTTP with httpx: one request per blueprint (with `n` choices), spread round-robin over the
replicas in `base_urls`, at most `max_concurrency` in flight. 429, 5xx, timeouts and dropped
connections are retried with exponential backoff and jitter (honouring `Retry-After`). Problems that
no retry can fix — a server that is not running, a wrong key, an unknown model — stop the run with an
`EngineError` that says what to do; a request that keeps failing for its own reasons becomes an
invalid proposal that records why, so one bad request never loses the others.

How the model is asked (`schema_mode`):
- `tools` (the default): the OpenAI `tools` list the exports write, with `tool_choice="required"`
  and every tool `strict`, so the server renders them through the model's chat template, holds the
  arguments to their schema, and its tool parser (`vllm serve --enable-auto-tool-choice
  --tool-call-parser hermes`) returns `tool_calls`. Any OpenAI-compatible server takes this.
- `tools_compact` (vLLM servers): the same tools with `tool_choice="auto"` and a structural tag
  that holds the answer to the model's own markers with compact JSON (no whitespace between
  tokens: fewer tokens, no runs of control characters from weak models) between them.
- `response_format`, `structured_outputs`, `none`: the `json` fallback for models without a tool
  template: tools described in the system prompt, a JSON-schema constraint on the whole answer.

Token counts come from the answer's `usage`, which totals all `n` choices of a request: each
proposal gets `prompt_tokens`, but `completion_tokens` only when `n == 1`; with `n > 1` it is None
(unknown), never a guessed share. The vLLM engine counts tokens per choice.

Nothing a server sends ends a run with a traceback: an answer that is not what the API promises
(a list, no `choices`, JSON nested too deep) is retried like a 5xx and then kept as an invalid
proposal with the reason, as is anything unforeseen while reading it.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import random
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

from codesearch_core.engines.base import (
    ProgressFn,
    SamplingSettings,
    StopFn,
    check_n,
    proposal_from_text,
)
from codesearch_core.engines.prompt import (
    Example,
    Message,
    PromptConfig,
    build_messages,
    messages_to_json,
)
from codesearch_core.engines.tool_format import DEFAULT_TOOL_FORMAT, get_tool_format
from codesearch_core.errors import EngineError
from codesearch_core.models import Blueprint, Proposal
from codesearch_core.tools import OPENAI_TOOLS, TOOL_CALL_SCHEMA

if TYPE_CHECKING:
    # httpx loads when a request is made: the CLI imports the engines for every command.
    import httpx

ENGINE_NAME: Final = "openai"
SchemaMode = Literal["tools", "tools_compact", "response_format", "structured_outputs", "none"]
SCHEMA_MODES: Final[tuple[str, ...]] = (
    "tools",
    "tools_compact",
    "response_format",
    "structured_outputs",
    "none",
)

_RETRY_STATUS: Final = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
#: Status codes that say the set-up is wrong: every other request would fail the same way.
_FATAL_STATUS: Final[dict[int, str]] = {
    401: "check the API key (--api-key or OPENAI_API_KEY)",
    403: "the API key is not allowed to use this model",
    404: "check the model name and that the base URL ends in /v1",
}


@dataclass(frozen=True, slots=True)
class OpenAISettings:
    """Where the server is and how hard to try. `base_urls` end in `/v1`."""

    base_urls: tuple[str, ...]
    model: str
    api_key: str | None = None
    schema_mode: SchemaMode = "tools"
    #: The model's tool-call syntax: what a server without a tool parser sends back as text.
    tool_format: str = DEFAULT_TOOL_FORMAT
    max_concurrency: int = 8
    timeout_s: float = 120.0
    max_attempts: int = 5
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0
    extra_body: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.base_urls:
            raise EngineError("give at least one base URL, e.g. http://127.0.0.1:8000/v1")
        for url in self.base_urls:
            if not url.startswith(("http://", "https://")):
                raise EngineError(f"base URL {url!r} must start with http:// or https://")
            import httpx

            try:
                httpx.URL(url)
            except httpx.InvalidURL as err:
                raise EngineError(f"base URL {url!r} is not a valid URL: {err}") from None
        if not self.model:
            raise EngineError("give the model name the server serves (--model)")
        if self.schema_mode not in SCHEMA_MODES:
            raise EngineError(
                f"schema_mode must be one of {', '.join(SCHEMA_MODES)}, got {self.schema_mode!r}"
            )
        tool_format = get_tool_format(self.tool_format)
        if self.schema_mode == "tools_compact" and not tool_format.begin:
            raise EngineError(
                f"tools_compact needs a tool format with markers (hermes, mistral), not "
                f"{tool_format.name}: use schema_mode tools"
            )
        if self.max_concurrency < 1 or self.max_attempts < 1:
            raise EngineError("max_concurrency and max_attempts must be at least 1")
        if self.timeout_s <= 0:
            raise EngineError(f"timeout_s must be positive, got {self.timeout_s}")
        try:
            json.dumps(dict(self.extra_body))
        except (TypeError, ValueError) as err:
            # Found here, once, rather than as the same failure in every request's worker thread.
            raise EngineError(f"extra_body must be JSON: {err}") from None


class _RequestFailed(Exception):
    """One request failed for good (retries spent); becomes an invalid proposal."""


class OpenAIEngine:
    """Chat completions with the tool-call schema enforced by the server."""

    name: str = ENGINE_NAME

    def __init__(self, settings: OpenAISettings) -> None:
        self.settings = settings
        self._urls = tuple(u.rstrip("/") for u in settings.base_urls)
        self._next_url = 0
        self._url_lock = threading.Lock()

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def uses_tools(self) -> bool:
        return self.settings.schema_mode in ("tools", "tools_compact")

    def propose(
        self,
        blueprints: Sequence[Blueprint],
        *,
        n: int = 1,
        settings: SamplingSettings | None = None,
        prompt: PromptConfig | None = None,
        examples: Sequence[Example] = (),
        on_progress: ProgressFn | None = None,
        should_stop: StopFn | None = None,
    ) -> list[Proposal]:
        """`n` choices per blueprint; results come back in blueprint order whatever order they finish."""
        check_n(n)
        sampling = settings or SamplingSettings()
        results: dict[int, list[Proposal]] = {}
        with (
            self.open_client() as client,
            ThreadPoolExecutor(max_workers=self.settings.max_concurrency) as pool,
        ):
            # Submitting lazily keeps the queue short, so a stop or a fatal error wastes little.
            pending: dict[Future[list[Proposal]], int] = {}
            queue = iter(enumerate(blueprints))
            done = 0
            try:
                while True:
                    stopping = should_stop is not None and should_stop()
                    while not stopping and len(pending) < self.settings.max_concurrency:
                        item = next(queue, None)
                        if item is None:
                            break
                        index, blueprint = item
                        messages = build_messages(
                            blueprint.intent, prompt, examples, template_tools=self.uses_tools
                        )
                        future = pool.submit(
                            self._propose_one, client, blueprint, messages, n, sampling
                        )
                        pending[future] = index
                    if not pending:
                        break
                    finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for future in finished:
                        results[pending.pop(future)] = future.result()
                        done += 1
                        if on_progress is not None:
                            on_progress(done, len(blueprints))
            except BaseException:
                for future in pending:
                    future.cancel()
                raise
        return [p for i in sorted(results) for p in results[i]]

    def open_client(self) -> httpx.Client:
        """An HTTP client with this engine's key, timeouts and connection limit (close it after)."""
        import httpx

        headers = {"Content-Type": "application/json"}
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"
        timeout = httpx.Timeout(self.settings.timeout_s, connect=min(10.0, self.settings.timeout_s))
        limits = httpx.Limits(max_connections=self.settings.max_concurrency)
        return httpx.Client(headers=headers, timeout=timeout, limits=limits)

    def chat_completion(
        self, client: httpx.Client, body: dict[str, Any]
    ) -> tuple[dict[str, Any] | None, str]:
        """One chat-completions request of the caller's own making (the gym's multi-turn episodes),
        with this engine's retries, backoff and replicas: the decoded answer, or None and why this
        request failed for good. An EngineError when no request can work (server down, wrong key
        or model), as in `propose`."""
        try:
            answer, _ = self._post(client, body)
        except _RequestFailed as err:
            return None, str(err)
        return answer, ""

    def _propose_one(
        self,
        client: httpx.Client,
        blueprint: Blueprint,
        messages: list[Message],
        n: int,
        sampling: SamplingSettings,
    ) -> list[Proposal]:
        record = sampling.to_dict(n)
        record["schema_mode"] = self.settings.schema_mode
        if self.uses_tools:
            record["tool_format"] = self.settings.tool_format
        prompt_json = messages_to_json(messages)
        try:
            body, latency = self._post(client, self._request_body(messages, n, sampling))
            return self._proposals(blueprint, body, latency, n, record, prompt_json)
        except _RequestFailed as err:
            error = str(err)
        except EngineError:
            raise
        except Exception as err:
            # This runs in a worker thread, and a server's answer is not ours to trust: what this
            # code did not foresee costs this blueprint's proposals, not the run.
            error = f"unexpected {type(err).__name__} handling the server's answer: {err}"
        return [
            Proposal(
                blueprint_id=blueprint.id,
                engine=ENGINE_NAME,
                model=self.model,
                raw_text="",
                call=None,
                valid=False,
                error=error,
                sampling=record,
                prompt=prompt_json,
            )
        ]

    def _proposals(
        self,
        blueprint: Blueprint,
        body: Mapping[str, Any],
        latency: float,
        n: int,
        record: dict[str, Any],
        prompt_json: str,
    ) -> list[Proposal]:
        usage: Mapping[str, Any] = body["usage"] if isinstance(body.get("usage"), Mapping) else {}
        prompt_tokens = _int_or_none(usage.get("prompt_tokens"))
        # `usage` totals all choices; it is exact for one proposal only when there is one choice.
        completion_tokens = _int_or_none(usage.get("completion_tokens")) if n == 1 else None
        proposals = []
        tool_format = get_tool_format(self.settings.tool_format) if self.uses_tools else None
        for choice in body["choices"]:
            finish = choice.get("finish_reason") if isinstance(choice, Mapping) else None
            text, parsed_by_server = _choice_text(choice)
            proposals.append(
                proposal_from_text(
                    blueprint.id,
                    text,
                    engine=ENGINE_NAME,
                    model=self.model,
                    finish_reason=finish if isinstance(finish, str) else None,
                    sampling=record,
                    prompt=prompt_json,
                    latency_s=latency,
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                    # The server's tool parser already took the markers off; its text has none.
                    tool_format=None if parsed_by_server else tool_format,
                )
            )
        return proposals

    def _request_body(
        self, messages: list[Message], n: int, sampling: SamplingSettings
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "n": n,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "max_tokens": sampling.max_tokens,
        }
        if sampling.seed is not None:
            body["seed"] = sampling.seed
        mode = self.settings.schema_mode
        if mode in ("tools", "tools_compact"):
            strict = mode == "tools"
            body["tools"] = [
                {**tool, "function": {**tool["function"], "strict": True}} if strict else tool
                for tool in OPENAI_TOOLS
            ]
            body["tool_choice"] = "required" if strict else "auto"
            body["parallel_tool_calls"] = False
            if mode == "tools_compact":
                tool_format = get_tool_format(self.settings.tool_format)
                body["structured_outputs"] = tool_format.structured_outputs(compact=True)
        elif self.settings.schema_mode == "response_format":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "tool_call", "schema": TOOL_CALL_SCHEMA, "strict": True},
            }
        elif self.settings.schema_mode == "structured_outputs":
            body["structured_outputs"] = {"json": TOOL_CALL_SCHEMA}
        body.update(self.settings.extra_body)
        return body

    def _first_replica(self) -> int:
        with self._url_lock:
            first = self._next_url
            self._next_url += 1
        return first

    def _post(self, client: httpx.Client, body: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """POST with retries; returns the decoded body and the latency of the attempt that worked."""
        import httpx

        last_problem = ""
        refused: set[str] = set()
        first = self._first_replica()
        for attempt in range(self.settings.max_attempts):
            # Each retry goes to the next replica, so one dead replica does not fail a request.
            base = self._urls[(first + attempt) % len(self._urls)]
            url = f"{base}/chat/completions"
            retry_after: float | None = None
            started = time.perf_counter()
            try:
                response = client.post(url, json=body)
            except httpx.ConnectError as err:
                refused.add(base)
                last_problem = f"cannot reach {base}: {_reason(err)}"
            except httpx.TimeoutException:
                last_problem = f"{base}: no answer within {self.settings.timeout_s:g} s"
            except httpx.TransportError as err:
                last_problem = f"{base}: connection failed: {_reason(err)}"
            except httpx.RequestError as err:
                # A body that does not decompress, a redirect loop: perhaps a proxy's hiccup.
                last_problem = f"{base}: bad response: {type(err).__name__}: {err}"
            else:
                latency = time.perf_counter() - started
                status = response.status_code
                if status == 200:
                    decoded = _decode(response)
                    if isinstance(decoded, str):
                        last_problem = f"{base}: {decoded}"
                    else:
                        return decoded, latency
                elif status in _FATAL_STATUS:
                    raise EngineError(
                        f"{url}: HTTP {status} {_server_message(response)}: {_FATAL_STATUS[status]}"
                    )
                elif status in _RETRY_STATUS:
                    retry_after = _retry_after(response)
                    last_problem = f"{base}: HTTP {status} {_server_message(response)}"
                else:
                    # 400 and the like: this request is wrong (prompt too long, bad parameter);
                    # retrying cannot help, and other requests may be fine.
                    raise _RequestFailed(f"{url}: HTTP {status} {_server_message(response)}")
            if attempt + 1 < self.settings.max_attempts:
                time.sleep(self._backoff(attempt, retry_after))
        if refused == set(self._urls):
            raise EngineError(
                f"{last_problem} — is `vllm serve` running there?"
                if "refused" in last_problem
                else last_problem
            )
        raise _RequestFailed(
            f"{last_problem} (gave up after {self.settings.max_attempts} attempts)"
        )

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.settings.backoff_max_s)
        ceiling = min(self.settings.backoff_max_s, self.settings.backoff_base_s * 2.0**attempt)
        # "Equal jitter": never less than half the step, so a herd of clients spreads out.
        return ceiling / 2 + random.uniform(0, ceiling / 2)


def _decode(response: httpx.Response) -> dict[str, Any] | str:
    """The JSON body with a `choices` list, or a sentence saying what was wrong with it."""
    try:
        body = response.json()
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested too deep to decode
        return f"the server answered 200 with a body that is not JSON: {response.text[:200]!r}"
    if not isinstance(body, dict) or not isinstance(body.get("choices"), list):
        return f"the server answered 200 without a `choices` list: {response.text[:200]!r}"
    if not body["choices"]:
        return "the server answered 200 with an empty `choices` list"
    return body


def _choice_text(choice: Any) -> tuple[str, bool]:
    """The call one choice holds, as text, and whether the server's tool parser read it.

    A server's parser answers in `tool_calls`, with `arguments` as a JSON string (the API's
    form, not a model's mistake): it is decoded here so the stored text is the call itself. A
    server whose parser could not read the model's text (no parser, or output it rejects)
    answers with the text in `content`, which the model's tool format then reads.
    """
    message = choice.get("message") if isinstance(choice, Mapping) else None
    if not isinstance(message, Mapping):
        return "", False
    tool_calls = message.get("tool_calls")
    if isinstance(tool_calls, list) and tool_calls:
        first = tool_calls[0]
        function = first.get("function") if isinstance(first, Mapping) else None
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                # Undecodable: kept as the string, and the repair step says what is wrong with it.
                with contextlib.suppress(ValueError, RecursionError):
                    arguments = json.loads(arguments, strict=False)
            call = {"name": function["name"], "arguments": arguments}
            return json.dumps(call, ensure_ascii=False), True
        return json.dumps(first, ensure_ascii=False), True
    content = message.get("content")
    return (content if isinstance(content, str) else ""), False


def _server_message(response: httpx.Response) -> str:
    """The error text the server sent (OpenAI style `{"error": {"message"}}` or plain)."""
    try:
        body = response.json()
    except (ValueError, RecursionError):
        return response.reason_phrase + (f": {response.text[:200]}" if response.text else "")
    if isinstance(body, dict):
        error = body.get("error", body.get("message", body.get("detail")))
        if isinstance(error, dict):
            error = error.get("message", error)
        if error is not None:
            return f"{response.reason_phrase}: {str(error)[:300]}"
    return response.reason_phrase


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _reason(err: Exception) -> str:
    text = str(err).lower()
    if "refused" in text:
        return "connection refused"
    if "name or service not known" in text or "nodename nor servname" in text:
        return "unknown host"
    return str(err) or type(err).__name__


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
