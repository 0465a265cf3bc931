"""A chat model as a gym policy: the episode as a conversation with tools.

    policy = ChatPolicy(OpenAIChat(engine, sampling))     # an OpenAI-compatible server
    policy = ChatPolicy(VllmChat(engine, sampling))       # vLLM in this process
    run = evaluate_agent(policy, tasks); policy.close()

The conversation opens with `episode.messages()` and offers `episode.tools()` (the gym's four).
Each assistant message is one turn: all its calls go to ONE `episode.step`, and each observation
comes back as a `tool` message answering its call's id, until the episode is done. An answer
with no call ends the episode unsubmitted (`no_call`: it scores 0). What the model wrote that is
not a valid call is a call the environment refuses (`chat_calls`), never an exception here.

A request that fails for good (its retries spent, a prompt longer than vLLM's context) stops its
episode (`stopped`, 0) and is noted in `failures`; what no request can survive (the server gone,
the engine broken) is an EngineError that ends the evaluation, as in the single-call eval.

The backends share one small interface (`ChatBackend.complete`). `OpenAIChat` sends each turn as a
request of its own (the engine's retries, replicas and timeouts; `parallel_tool_calls` on).
`VllmChat` batches: every episode's thread hands its conversation to one generating thread, which
puts all the turns waiting at that moment into one `LLM.chat` call (vLLM is fast in batches, and
not to be called from several threads at once).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

from codesearch_core.engines import (
    OpenAIEngine,
    SamplingSettings,
    VllmEngine,
    get_tool_format,
    tool_template_messages,
)
from codesearch_core.errors import EngineError
from codesearch_core.gym.chat_calls import server_calls, text_calls
from codesearch_core.gym.episode import Episode

if TYPE_CHECKING:
    import httpx

#: Failure notes a policy keeps (the first say what went wrong; a thousand say nothing more).
_MAX_FAILURES: Final = 100


@dataclass(frozen=True, slots=True)
class Reply:
    """One assistant turn: the message as it goes back into the conversation, its calls (OpenAI
    `tool_calls` entries, each with an id), or why the request failed for good."""

    message: dict[str, Any]
    calls: tuple[dict[str, Any], ...] = ()
    error: str = ""


class ChatBackend(Protocol):
    name: str
    model: str

    def complete(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], turn: int
    ) -> Reply: ...

    def close(self) -> None: ...


class ChatPolicy:
    """Plays an episode with a chat model (module docstring). Thread-safe: `evaluate_agent` plays
    several episodes at once."""

    def __init__(self, backend: ChatBackend) -> None:
        self.backend = backend
        self.name = backend.name
        self.model = backend.model
        #: Episodes stopped by a failed request, and the first failures' reasons.
        self.stopped = 0
        self.failures: list[str] = []
        self._lock = threading.Lock()

    @property
    def sampling(self) -> dict[str, Any]:
        """The sampling settings the model plays with, kept with each stored episode ({} for a
        backend that has none: a scripted one)."""
        settings = getattr(self.backend, "sampling", None)
        if not isinstance(settings, SamplingSettings):
            return {}
        return {k: v for k, v in settings.to_dict(1).items() if k != "n"}

    def play(self, episode: Episode) -> None:
        messages: list[dict[str, Any]] = episode.messages()
        tools = episode.tools()
        while not episode.done:
            reply = self.backend.complete(messages, tools, episode.turns_used)
            if reply.error:
                self._note(f"{episode.blueprint.id}: {reply.error}")
                episode.stop()
                return
            if not reply.calls:
                episode.step([])  # the model is done talking: ends it, unsubmitted
                return
            step = episode.step(reply.calls)
            messages.append(reply.message)
            messages.extend(
                {"role": "tool", "tool_call_id": call["id"], "content": observation.text}
                for call, observation in zip(reply.calls, step.observations, strict=True)
            )

    def _note(self, failure: str) -> None:
        with self._lock:
            self.stopped += 1
            if len(self.failures) < _MAX_FAILURES:
                self.failures.append(failure)

    def close(self) -> None:
        self.backend.close()


def _first_message(answer: Mapping[str, Any]) -> Mapping[str, Any] | None:
    choice = answer["choices"][0]  # the engine checked there is a non-empty `choices` list
    message = choice.get("message") if isinstance(choice, Mapping) else None
    return message if isinstance(message, Mapping) else None


class OpenAIChat:
    """Turns from an OpenAI-compatible server (`vllm serve --enable-auto-tool-choice
    --tool-call-parser hermes`, or a hosted API), through the engine's own request path."""

    name = "openai"

    def __init__(self, engine: OpenAIEngine, sampling: SamplingSettings) -> None:
        self.engine = engine
        self.model = engine.model
        self.sampling = sampling
        self.tool_format = get_tool_format(engine.settings.tool_format)
        self._client: httpx.Client = engine.open_client()

    def body(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        s = self.sampling
        body: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "tools": list(tools),
            # The model may answer without a call: that is how it says it is done (or gives up).
            "tool_choice": "auto",
            "parallel_tool_calls": True,
            "temperature": s.temperature,
            "top_p": s.top_p,
            "max_tokens": s.max_tokens,
        }
        if s.seed is not None:
            body["seed"] = s.seed
        body.update(self.engine.settings.extra_body)
        return body

    def complete(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], turn: int
    ) -> Reply:
        answer, error = self.engine.chat_completion(self._client, self.body(messages, tools))
        if answer is None:
            return Reply({}, error=error)
        message = _first_message(answer)
        if message is None:
            return Reply({}, error=f"the server's answer holds no message: {str(answer)[:200]}")
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        tool_calls = message.get("tool_calls")
        if isinstance(tool_calls, list) and tool_calls:
            calls = server_calls(tool_calls, turn)
            return Reply({"role": "assistant", "content": content, "tool_calls": calls},
                         tuple(calls))  # fmt: skip
        # No tool parser on the server: the calls are in the text, in the model's syntax.
        return Reply({"role": "assistant", "content": text},
                     tuple(text_calls(text, self.tool_format, turn)))  # fmt: skip

    def close(self) -> None:
        self._client.close()


@dataclass(slots=True)
class _Request:
    conversation: list[dict[str, Any]]
    tools: list[Any]
    future: Future[tuple[str, str | None]]


class VllmChat:
    """Turns from vLLM in this process: the model's chat template renders the tools, the answer
    is read in its tool format (module docstring on batching)."""

    name = "vllm"

    def __init__(
        self,
        engine: VllmEngine,
        sampling: SamplingSettings,
        batch_size: int = 256,
        sampling_params: Any = None,
    ) -> None:
        """`sampling_params`: vLLM's own `SamplingParams`, built from `sampling` when not given."""
        if batch_size < 1:
            raise EngineError(f"batch_size must be at least 1, got {batch_size}")
        self.engine = engine
        self.model = engine.model
        self.sampling = sampling
        self.batch_size = batch_size
        #: The engine's syntax: its model's own, or the project's tool template's (Hermes) when the
        #: model's chat template drops the tools.
        self.tool_format = engine.tool_format
        self._tool_template = engine.tool_template or not self.tool_format.template_tools
        self._params: Any = sampling_params
        self._pending: list[_Request] = []
        self._ready = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._generate, name="gym-vllm", daemon=True)
        self._thread.start()

    def conversation(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]
    ) -> list[dict[str, Any]]:
        """The messages as the model is given them: as they are when its chat template shows the
        tools, else in the project's tool template (`engines.tool_template_messages`: the tools
        in the system message, its calls and their results as text), the same one the engine's
        single-call prompts and the training layouts use; for the `json` format, its calls bare."""
        if not self._tool_template:
            return [dict(m) for m in messages]
        return tool_template_messages(messages, tools, self.tool_format)

    def complete(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], turn: int
    ) -> Reply:
        request = _Request(self.conversation(messages, tools), list(tools), Future())
        with self._ready:
            if self._closed:
                raise EngineError("the vLLM chat backend is closed")
            self._pending.append(request)
            self._ready.notify()
        text, error = request.future.result()  # raises what failed the whole batch
        if error is not None:
            return Reply({}, error=error)
        # The model's own text goes back into the conversation, calls and all, as it wrote them.
        return Reply({"role": "assistant", "content": text},
                     tuple(text_calls(text, self.tool_format, turn)))  # fmt: skip

    def _sampling_params(self) -> Any:
        if self._params is None:
            from vllm import SamplingParams

            s = self.sampling
            # No grammar: a turn may hold several calls, or none, which the engine's one-call
            # structural tag would not allow. The answer is read as the model wrote it.
            self._params = SamplingParams(
                n=1,
                temperature=s.temperature,
                top_p=s.top_p,
                max_tokens=s.max_tokens,
                seed=s.seed,
                # A model may mark its tool-call tags as special tokens; the reader needs them.
                skip_special_tokens=not self.tool_format.begin,
            )
        return self._params

    def _generate(self) -> None:
        while True:
            with self._ready:
                while not self._pending and not self._closed:
                    self._ready.wait()
                if self._closed:
                    return
                batch = self._pending[: self.batch_size]
                del self._pending[: self.batch_size]
            try:
                self._run(batch)
            except BaseException as err:  # every waiting episode hears why, none waits forever
                for request in batch:
                    if not request.future.done():
                        request.future.set_exception(err)

    def _run(self, batch: list[_Request]) -> None:
        chat = self.engine.chat_arguments()
        chat.pop("tools", None)
        if not self._tool_template:
            chat["tools"] = batch[0].tools  # every episode has the same four (`gym_tools`)
        failed: dict[int, str] = {}
        # The engine's own batch call (`VllmEngine.chat_batch`): one `LLM.chat` for the batch, and a
        # request vLLM refuses (a conversation grown past the context) fails alone, into `failed`.
        outputs = self.engine.chat_batch(
            [r.conversation for r in batch],
            list(range(len(batch))),
            self._sampling_params(),
            chat,
            failed,
        )
        for i, request in enumerate(batch):
            if i in failed:
                request.future.set_result(("", failed[i]))
                continue
            request.future.set_result((outputs[i].outputs[0].text, None))

    def close(self) -> None:
        """Stop the generating thread; episodes still waiting hear the backend is closed."""
        with self._ready:
            self._closed = True
            waiting, self._pending = self._pending, []
            self._ready.notify_all()
        for request in waiting:
            request.future.set_exception(EngineError("the vLLM chat backend is closed"))
