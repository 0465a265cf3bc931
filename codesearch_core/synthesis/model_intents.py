"""Intents written by a model: n samples per target, structured as `{"intent", "difficulty"}`,
all the targets of a batch in one call of the sampler (with vLLM: one `generate`).

The prompt shows the model what the target finds (the rule in words, the subject, a few of the
findings' lines) and asks for the request a developer would type, in plain words; the samples are
checked and ranked by `synthesis.intents.choose`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final

from codesearch_core.corpora import read_file_lines
from codesearch_core.engines import (
    JsonSampler,
    OpenAIEngine,
    SamplingSettings,
    VllmEngine,
    openai_json_sampler,
    vllm_json_sampler,
)
from codesearch_core.errors import CodesearchError
from codesearch_core.synthesis.intents import INTENT_SCHEMA, WrittenIntent, choose
from codesearch_core.synthesis.mine import Target

SHOWN_FINDINGS: Final = 4
SHOWN_LINE_CHARS: Final = 120

SYSTEM: Final = (
    "You write the request a developer types into a code-search assistant. Given what a search "
    "found in a repository, write that request as one sentence in plain words. Never quote a "
    "search pattern, a regular expression or ast-grep metavariables such as $ARGS: say what to "
    "find, not how. Answer with JSON only: "
    '{"intent": "<the request>", "difficulty": "easy" | "medium" | "hard"}.'
)


def _finding_lines(target: Target) -> list[str]:
    shown = []
    for span in target.expected[:SHOWN_FINDINGS]:
        try:
            lines = read_file_lines(target.corpus, span.path)
            text = lines[span.start_line - 1].strip()[:SHOWN_LINE_CHARS]
        except (CodesearchError, IndexError):
            text = ""
        shown.append(f"- {span.path}:{span.start_line}: {text}")
    return shown


def intent_messages(target: Target) -> list[dict[str, str]]:
    """The conversation that asks a model for one target's intent."""
    fact = target.template.intents[0].format(**target.wording)
    user = "\n".join(
        [
            f"Repository: {target.corpus}. Language: {target.wording['lang'] or 'any'}.",
            f"The search: {fact}.",
            f"It finds {len(target.expected)} places in {target.files} files, for example:",
            *_finding_lines(target),
            "Write the developer's request for exactly these places.",
        ]
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


class ModelWriter:
    """Intents from a model engine's JSON sampler (`engines.vllm_json_sampler`,
    `engines.openai_json_sampler`)."""

    def __init__(self, engine: str, model: str, sampler: JsonSampler, *, n: int = 4) -> None:
        self._engine, self._model, self._sampler, self.n = engine, model, sampler, n

    @property
    def engine(self) -> str:
        return self._engine

    @property
    def model(self) -> str:
        return self._model

    def write(self, targets: Sequence[Target], *, seed: int) -> list[WrittenIntent]:
        del seed  # the sampler carries the sampling seed
        conversations = [intent_messages(t) for t in targets]
        samples = self._sampler(conversations, self.n)
        return [
            choose(found, target, json.dumps(messages, ensure_ascii=False))
            for target, messages, found in zip(targets, conversations, samples, strict=True)
        ]


def vllm_writer(engine: VllmEngine, sampling: SamplingSettings, *, n: int = 4) -> ModelWriter:
    """Intents from an in-process vLLM engine (`engines.get_vllm_engine`): a batch per `chat`."""
    sampler = vllm_json_sampler(engine, INTENT_SCHEMA, sampling)
    return ModelWriter("vllm", engine.settings.model, sampler, n=n)


def openai_writer(engine: OpenAIEngine, sampling: SamplingSettings, *, n: int = 4) -> ModelWriter:
    """Intents from an OpenAI-compatible server."""
    sampler = openai_json_sampler(engine, INTENT_SCHEMA, sampling)
    return ModelWriter("openai", engine.settings.model, sampler, n=n)
