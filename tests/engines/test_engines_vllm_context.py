"""The vLLM engine's context length: the default against the model's own limit, and long prompts.

No vLLM needed: these are the decisions; `test_engines_vllm.py` runs them on the real engine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codesearch_core.engines.vllm_context import (
    DEFAULT_MAX_MODEL_LEN,
    default_max_model_len,
    length_error,
    model_context_limit,
    prompt_lengths,
)
from codesearch_core.engines.vllm_engine import VllmSettings


def model_dir(
    tmp_path: Path, config: dict[str, Any], tokenizer: dict[str, Any] | None = None
) -> str:
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    if tokenizer is not None:
        (tmp_path / "tokenizer_config.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    return str(tmp_path)


def test_a_model_with_a_shorter_context_than_the_default_gets_its_own_with_a_notice(
    tmp_path: Path,
) -> None:
    model = model_dir(tmp_path, {"max_position_embeddings": 2048})
    assert model_context_limit(model) == (2048, "config.json max_position_embeddings")
    length, notice = default_max_model_len(model)
    assert length == 2048
    assert notice.startswith("max model length 2048, the model's own limit")
    assert "--max-model-len" in notice


def test_a_longer_context_or_an_unknown_one_keeps_the_default(tmp_path: Path) -> None:
    assert default_max_model_len(model_dir(tmp_path, {"max_position_embeddings": 32768})) == (
        DEFAULT_MAX_MODEL_LEN,
        "",
    )
    assert default_max_model_len("Qwen/Qwen2.5-Coder-7B-Instruct") == (DEFAULT_MAX_MODEL_LEN, "")
    assert model_context_limit(str(tmp_path / "missing")) is None
    assert model_context_limit(model_dir(tmp_path, {"hidden_size": 8})) is None


@pytest.mark.parametrize(
    ("config", "tokenizer", "limit"),
    [
        ({"n_positions": 1024, "max_position_embeddings": 2048}, None, 1024),  # the smallest
        ({"text_config": {"max_position_embeddings": 1000}}, None, 1000),  # a multimodal config
        ({"max_position_embeddings": 1024, "rope_scaling": {"type": "linear", "factor": 4}}, None, 4096),
        ({"max_position_embeddings": 1024, "rope_scaling": {"rope_type": "yarn", "factor": 4}}, None, 1024),
        ({"max_position_embeddings": 2048}, {"model_max_length": 512}, 512),
        ({"max_position_embeddings": 2048}, {"model_max_length": 1e30}, 2048),  # "no limit"
    ],
)  # fmt: skip
def test_the_models_limit_is_read_the_way_vllm_reads_it(
    tmp_path: Path, config: dict[str, Any], tokenizer: dict[str, Any] | None, limit: int
) -> None:
    found = model_context_limit(model_dir(tmp_path, config, tokenizer))
    assert found is not None and found[0] == limit


def test_settings_leave_the_length_to_the_engine_unless_given() -> None:
    assert VllmSettings(model="m").max_model_len is None
    assert VllmSettings(model="m").llm_kwargs()["max_model_len"] == DEFAULT_MAX_MODEL_LEN
    assert VllmSettings(model="m", max_model_len=1024).llm_kwargs()["max_model_len"] == 1024


def test_a_prompt_that_leaves_no_token_for_the_answer_is_too_long() -> None:
    assert length_error(2047, 2048) == ""
    assert length_error(None, 2048) == length_error(5000, None) == ""
    error = length_error(2048, 2048)
    assert error.startswith("prompt too long for the model: 2048 tokens")
    assert "--max-model-len" in error


class FakeTokenizer:
    """Renders a conversation as its contents plus the tools; one token per word."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def apply_chat_template(self, messages: list[dict[str, str]], **options: Any) -> str:
        self.calls.append(options)
        if messages[0]["content"] == "broken":
            raise ValueError("no template")
        return " ".join(m["content"] for m in messages) + " tool" * len(options.get("tools", ()))

    def encode(self, text: str, **options: Any) -> list[int]:
        assert options == {"add_special_tokens": False, "verbose": False}
        return list(range(len(text.split())))


def test_prompt_lengths_render_each_conversation_as_llm_chat_does() -> None:
    tokenizer = FakeTokenizer()
    chat = {"tools": [{}, {}], "chat_template": "T", "chat_template_kwargs": {"think": False}}
    conversations = [
        [{"role": "user", "content": "a b c"}],
        [{"role": "user", "content": "broken"}],
    ]
    assert prompt_lengths(tokenizer, conversations, chat) == [5, None]
    assert tokenizer.calls[0] == {
        "tokenize": False,
        "add_generation_prompt": True,
        "tools": [{}, {}],
        "chat_template": "T",
        "think": False,
    }
