"""Free-form JSON samples from the model engines: n samples per conversation, each held to a JSON
Schema by the engine's structured outputs. Synthesis asks for intents this way
(`{"intent", "difficulty"}`); the engines' `propose` is for tool calls only.

`JsonSampler(conversations, n)` returns, per conversation, its samples' texts (fewer, or none,
when a request failed: a failed target is the caller's to count, not a reason to stop the run).
With vLLM the whole batch is one `LLM.chat` call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from codesearch_core.engines.base import SamplingSettings, check_n
from codesearch_core.engines.openai_engine import OpenAIEngine, _RequestFailed
from codesearch_core.engines.prompt import Message
from codesearch_core.engines.vllm_engine import VllmEngine
from codesearch_core.errors import EngineError

JsonSampler = Callable[[Sequence[list[Message]], int], list[list[str]]]


def vllm_json_sampler(
    engine: VllmEngine, schema: Mapping[str, Any], sampling: SamplingSettings
) -> JsonSampler:
    """Samples from an in-process vLLM engine: one `LLM.chat` call per batch, `n` per prompt."""

    def generate(conversations: Sequence[list[Message]], n: int) -> list[list[str]]:
        check_n(n)
        llm = engine._llm  # same package: the engine's LLM, without its tool-call machinery
        if llm is None:
            raise EngineError("this vLLM engine was shut down; get a new one from get_vllm_engine")
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        params = SamplingParams(
            n=n,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            max_tokens=sampling.max_tokens,
            seed=sampling.seed,
            structured_outputs=StructuredOutputsParams(json=dict(schema)),
        )
        # The chat template and its switches, not the tools: the answer is not a tool call.
        chat = {k: v for k, v in engine.chat_arguments().items() if k != "tools"}
        try:
            outputs = llm.chat(list(conversations), params, use_tqdm=False, **chat)
        except Exception as err:  # vLLM raises many types; all mean "this batch failed"
            raise EngineError(f"vLLM generation failed: {type(err).__name__}: {err}") from err
        return [[c.text for c in output.outputs] for output in outputs]

    return generate


def openai_json_sampler(
    engine: OpenAIEngine, schema: Mapping[str, Any], sampling: SamplingSettings
) -> JsonSampler:
    """Samples from an OpenAI-compatible server: one request per conversation with `n` choices
    and a `json_schema` response format."""

    def generate(conversations: Sequence[list[Message]], n: int) -> list[list[str]]:
        check_n(n)
        import httpx

        headers = {"Content-Type": "application/json"}
        if engine.settings.api_key:
            headers["Authorization"] = f"Bearer {engine.settings.api_key}"
        out: list[list[str]] = []
        with httpx.Client(headers=headers, timeout=engine.settings.timeout_s) as client:
            for messages in conversations:
                body: dict[str, Any] = {
                    "model": engine.model,
                    "messages": messages,
                    "n": n,
                    "temperature": sampling.temperature,
                    "top_p": sampling.top_p,
                    "max_tokens": sampling.max_tokens,
                    "response_format": {
                        "type": "json_schema",
                        "json_schema": {"name": "intent", "schema": dict(schema), "strict": True},
                    },
                }
                if sampling.seed is not None:
                    body["seed"] = sampling.seed
                try:
                    answer, _latency = engine._post(client, body)
                except _RequestFailed:
                    out.append([])
                    continue
                out.append([_content(choice) for choice in answer.get("choices", [])])
        return out

    return generate


def _content(choice: Any) -> str:
    message = choice.get("message") if isinstance(choice, Mapping) else None
    content = message.get("content") if isinstance(message, Mapping) else None
    return content if isinstance(content, str) else ""
