"""What every proposal engine is: blueprints in, `Proposal`s out, with the same sampling settings.

Engines differ only in where text comes from (vLLM in process, an OpenAI-compatible server, a
file, or deterministic mutations); turning text into a `Proposal` is shared (`proposal_from_text`),
so every engine parses, repairs and records errors the same way.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, Protocol

from codesearch_core.engines.prompt import Example, PromptConfig
from codesearch_core.engines.repair import parse_model_output, validate_and_repair
from codesearch_core.engines.tool_format import ToolFormat
from codesearch_core.errors import EngineError
from codesearch_core.models import Blueprint, Proposal, ToolCall

ProgressFn = Callable[[int, int], None]
"""Called as `on_progress(done, total)`, with `done` counting blueprints."""

StopFn = Callable[[], bool]
"""Polled between units of work; True stops the engine, which returns what it has so far."""


@dataclass(frozen=True, slots=True)
class SamplingSettings:
    """Sampling parameters shared by the model engines. `seed=None` leaves sampling unseeded."""

    temperature: float = 0.7
    top_p: float = 0.95
    max_tokens: int = 512
    seed: int | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.temperature <= 2.0:
            raise EngineError(f"temperature must be between 0 and 2, got {self.temperature}")
        if not 0.0 < self.top_p <= 1.0:
            raise EngineError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.max_tokens < 1:
            raise EngineError(f"max_tokens must be at least 1, got {self.max_tokens}")

    def to_dict(self, n: int) -> dict[str, Any]:
        """The sampling record stored with each proposal."""
        record: dict[str, Any] = {
            "n": n,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
        }
        if self.seed is not None:
            record["seed"] = self.seed
        return record


class Engine(Protocol):
    """A source of proposals. `name` is the engine kind; `model` what produced the text."""

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...

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
        """Up to `n` proposals per blueprint, in blueprint order. `settings=None`: the defaults."""
        ...


MAX_N: Final = 64
"""The most samples one blueprint's intent may ask a model for (the app's widget stops at 16).

Enough for best-of-n and DPO pairs; past it a typo (`--n 1000000000`) would have vLLM allocate per
sample or a server bill for every one. More samples of one intent come from more runs (`--seed`).
"""


def check_n(n: int, *, at_most: int | None = MAX_N) -> None:
    """Refuse a sample count outside `1..at_most` (`at_most=None`: no upper bound)."""
    if n < 1:
        raise EngineError(f"n (samples per blueprint) must be at least 1, got {n}")
    if at_most is not None and n > at_most:
        raise EngineError(
            f"n (samples per blueprint) must be at most {at_most}, got {n}; "
            "for more samples of the same intents, run again with another seed"
        )


class ReadCall(NamedTuple):
    """The first call a model's text makes (None: why not, in `error`), the repairs that made it
    valid, and how many calls the text wrote (`calls`; only the first is run)."""

    call: ToolCall | None
    repairs: tuple[str, ...]
    error: str
    calls: int


def read_call(
    raw_text: str, finish_reason: str | None = None, tool_format: ToolFormat | None = None
) -> ReadCall:
    """Parse, repair and validate what a model wrote (`tool_format`: its syntax; None: bare JSON)."""
    if tool_format is not None:
        parsed = tool_format.parse(raw_text, finish_reason)
    else:
        parsed = parse_model_output(raw_text, finish_reason)
    if parsed.error:
        return ReadCall(None, parsed.repairs, parsed.error, parsed.calls)
    result = validate_and_repair(parsed.value)
    return ReadCall(result.call, (*parsed.repairs, *result.repairs), result.error, parsed.calls)


def proposal_from_text(
    blueprint_id: str,
    raw_text: str,
    *,
    engine: str,
    model: str,
    finish_reason: str | None = None,
    sampling: Mapping[str, Any] | None = None,
    prompt: str = "",
    latency_s: float = 0.0,
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
    tool_format: ToolFormat | None = None,
) -> Proposal:
    """Parse and repair what a model wrote; a failure keeps the raw text and says precisely why.

    `tool_format`: the model's tool-call syntax, whose markers and shape are read first (None: a
    bare JSON call, as the `json` format and imported files have it).
    """
    call, repairs, error, _calls = read_call(raw_text, finish_reason, tool_format)
    return Proposal(
        blueprint_id=blueprint_id,
        engine=engine,
        model=model,
        raw_text=raw_text,
        call=call,
        valid=call is not None,
        error=error,
        repairs=tuple(repairs),
        sampling=dict(sampling or {}),
        prompt=prompt,
        latency_s=latency_s,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        finish_reason=finish_reason,
    )


def failed_proposal(
    blueprint_id: str,
    error: str,
    *,
    engine: str,
    model: str,
    sampling: Mapping[str, Any] | None = None,
    prompt: str = "",
    prompt_tokens: int | None = None,
) -> Proposal:
    """A blueprint's one proposal when its request failed (no text): the error says why."""
    return Proposal(
        blueprint_id=blueprint_id,
        engine=engine,
        model=model,
        raw_text="",
        call=None,
        valid=False,
        error=error,
        sampling=dict(sampling or {}),
        prompt=prompt,
        prompt_tokens=prompt_tokens,
    )


def proposal_to_dict(proposal: Proposal) -> dict[str, Any]:
    """The JSONL form of a proposal (what `codesearch propose --out` writes and `import` reads)."""
    return {
        "blueprint_id": proposal.blueprint_id,
        "engine": proposal.engine,
        "model": proposal.model,
        "raw_text": proposal.raw_text,
        "call": proposal.call.to_dict() if proposal.call else None,
        "valid": proposal.valid,
        "error": proposal.error,
        "repairs": list(proposal.repairs),
        "sampling": dict(proposal.sampling),
        "prompt": proposal.prompt,
        "latency_s": proposal.latency_s,
        "prompt_tokens": proposal.prompt_tokens,
        "completion_tokens": proposal.completion_tokens,
        "finish_reason": proposal.finish_reason,
        "mutation_kind": proposal.mutation_kind,
        "parent_id": proposal.parent_id,
    }


def proposal_to_json(proposal: Proposal) -> str:
    return json.dumps(proposal_to_dict(proposal), ensure_ascii=False)
