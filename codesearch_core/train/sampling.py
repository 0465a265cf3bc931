"""Rendering chat rows for a model and sampling episodes from it, in the worker (torch).

A row's `messages` and `tools` are rendered with the model's own chat template when it shows
tools (`engines.renders_tools`), else through the project's tool template
(`engines.tool_template_messages`): the one definition the engines and the gym's agent use, so
a model is trained on the prompt it is then asked with.

`HfChat` is a `gym.ChatBackend` over transformers' `generate` on the model being trained: RFT's
rollouts need no server and no second copy of the weights; on an accelerator `--sampler vllm`
(the gym's `VllmChat`) is faster.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from codesearch_core.engines import (
    DEFAULT_TOOL_FORMAT,
    SamplingSettings,
    get_tool_format,
    renders_tools,
    tool_template_messages,
)
from codesearch_core.gym import Reply, text_calls


class Renderer:
    """Token ids of a conversation as the model is shown it (module docstring)."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.own_template = renders_tools(tokenizer)

    @property
    def template(self) -> str:
        return "model" if self.own_template else "project"

    def text(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        *,
        add_generation_prompt: bool = False,
    ) -> str:
        if self.own_template:
            rendered = self.tokenizer.apply_chat_template(
                [dict(m) for m in messages], tools=[dict(t) for t in tools] or None,
                tokenize=False, add_generation_prompt=add_generation_prompt,
            )  # fmt: skip
        else:
            rendered = self.tokenizer.apply_chat_template(
                tool_template_messages(messages, tools),
                tokenize=False,
                add_generation_prompt=add_generation_prompt,
            )
        return str(rendered)

    def ids(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def row(self, row: Mapping[str, Any]) -> dict[str, list[int]]:
        """`input_ids` and `completion_mask` (1 from the first assistant turn on: the loss is on
        what the model writes, not on the prompt it is given)."""
        messages, tools = list(row["messages"]), list(row.get("tools") or [])
        ids = self.ids(self.text(messages, tools))
        first = next((i for i, m in enumerate(messages) if m.get("role") == "assistant"), None)
        start = 0
        if first is not None:
            prompt = self.ids(self.text(messages[:first], tools, add_generation_prompt=True))
            if ids[: len(prompt)] == prompt:
                start = len(prompt)
        return {"input_ids": ids, "completion_mask": [0] * start + [1] * (len(ids) - start)}


class HfChat:
    """A chat backend on transformers' `generate` (module docstring); one turn at a time."""

    name = "hf"

    def __init__(
        self,
        model: Any,
        renderer: Renderer,
        sampling: SamplingSettings,
        context: int,
        model_name: str,
    ) -> None:
        self.lm = model
        self.model = model_name  # what `ChatBackend` and a policy's provenance call the model
        self.renderer = renderer
        self.sampling = sampling
        self.context = context
        self.tool_format = get_tool_format(DEFAULT_TOOL_FORMAT)
        self._lock = threading.Lock()

    def complete(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], turn: int
    ) -> Reply:
        import torch

        ids = self.renderer.ids(self.renderer.text(messages, tools, add_generation_prompt=True))
        room = self.context - len(ids)
        if room < 1:
            return Reply({}, error=f"prompt too long for the model: {len(ids)} tokens, context "
                         f"{self.context}")  # fmt: skip
        tokenizer = self.renderer.tokenizer
        s = self.sampling
        with self._lock, torch.no_grad():
            if s.seed is not None:
                torch.manual_seed(s.seed + turn)
            inputs = torch.tensor([ids], device=self.lm.device)
            out = self.lm.generate(
                input_ids=inputs,
                attention_mask=torch.ones_like(inputs),
                max_new_tokens=min(s.max_tokens, room),
                do_sample=s.temperature > 0,
                temperature=s.temperature if s.temperature > 0 else None,
                top_p=s.top_p if s.temperature > 0 else None,
                pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id,
            )
        text = tokenizer.decode(out[0][len(ids) :], skip_special_tokens=True)
        return Reply({"role": "assistant", "content": text},
                     tuple(text_calls(text, self.tool_format, turn)))  # fmt: skip

    def close(self) -> None:
        return None
