"""The vLLM engine's context length: its default, the model's own limit, and prompts that exceed it.

`--max-model-len` defaults to `DEFAULT_MAX_MODEL_LEN` (a code-search prompt and its call fit), or
to the model's own limit when that is smaller (`default_max_model_len`): vLLM refuses a length
above the model's, so the default must not be what makes a small model fail to load.

A prompt the context cannot hold (with at least one token left for the answer) is refused by vLLM,
and one such prompt fails the whole `LLM.chat` batch. `prompt_lengths` counts each conversation's
tokens the way `LLM.chat` renders it (the model's chat template with the tools, then the
tokenizer), so the engine can fail only those blueprints (`length_error`) and generate the rest.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

#: The context length asked for when neither `--max-model-len` nor a preset gives one.
DEFAULT_MAX_MODEL_LEN: Final = 4096
#: config.json keys that bound a model's context (vLLM reads the same ones; the smallest wins).
_LENGTH_KEYS: Final = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_target_positions",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)
#: Rope scalings whose factor is already in max_position_embeddings (vLLM does not apply it).
_PRESCALED_ROPE: Final = ("su", "longrope", "llama3", "yarn", "deepseek_yarn")
#: Tokenizers without a limit say model_max_length = 1e30; anything this large is no limit.
_NO_LIMIT: Final = 10**9


def model_context_limit(model: str) -> tuple[int, str] | None:
    """The context length a local model directory's config allows, and the key that says so.

    None for a Hugging Face id (not read from the hub) or a config that names no length.
    """
    config = read_model_json(model, "config.json")
    if config is None:
        return None
    text_config = config.get("text_config")
    if isinstance(text_config, dict):
        config = {**config, **text_config}
    found = [
        (int(value), key)
        for key in _LENGTH_KEYS
        if isinstance(value := config.get(key), int | float) and value > 0
    ]
    if not found:
        return None
    limit, key = min(found)
    rope = config.get("rope_scaling") or config.get("rope_parameters")
    if isinstance(rope, dict):
        kind = rope.get("rope_type") or rope.get("type")
        factor = rope.get("factor")
        if kind not in _PRESCALED_ROPE and isinstance(factor, int | float) and factor > 0:
            limit = int(limit * factor)
    tokenizer = read_model_json(model, "tokenizer_config.json") or {}
    tokenizer_limit = tokenizer.get("model_max_length")
    if isinstance(tokenizer_limit, int | float) and 0 < tokenizer_limit < min(limit, _NO_LIMIT):
        return int(tokenizer_limit), "tokenizer_config.json model_max_length"
    return limit, f"config.json {key}"


def default_max_model_len(model: str) -> tuple[int, str]:
    """`DEFAULT_MAX_MODEL_LEN`, or the model's own limit when smaller (with a notice saying so)."""
    found = model_context_limit(model)
    if found is None or found[0] >= DEFAULT_MAX_MODEL_LEN:
        return DEFAULT_MAX_MODEL_LEN, ""
    limit, where = found
    return limit, (
        f"max model length {limit}, the model's own limit ({where}; the default "
        f"{DEFAULT_MAX_MODEL_LEN} is more than it takes; --max-model-len to change)"
    )


def prompt_lengths(
    tokenizer: Any, conversations: Sequence[Sequence[Mapping[str, Any]]], chat: Mapping[str, Any]
) -> list[int | None]:
    """Each conversation's prompt tokens as `LLM.chat(conversations, **chat)` renders them.

    None where the tokenizer cannot say (no chat template, a tokenizer of another kind): vLLM
    then checks that prompt itself.
    """
    options: dict[str, Any] = dict(chat.get("chat_template_kwargs") or {})
    if chat.get("tools"):
        options["tools"] = chat["tools"]
    if chat.get("chat_template"):
        options["chat_template"] = chat["chat_template"]
    lengths: list[int | None] = []
    for messages in conversations:
        try:
            text = tokenizer.apply_chat_template(
                list(messages), tokenize=False, add_generation_prompt=True, **options
            )
            lengths.append(len(_encode(tokenizer, text)))
        except Exception:  # any tokenizer's failure: leave the check to vLLM
            lengths.append(None)
    return lengths


def length_error(length: int | None, max_model_len: int | None) -> str:
    """Why vLLM would refuse this prompt ("" when it fits): it leaves no token for the answer."""
    if length is None or max_model_len is None or length < max_model_len:
        return ""
    return (
        f"prompt too long for the model: {length} tokens, and the context (--max-model-len) "
        f"holds {max_model_len} with the answer: raise --max-model-len (up to the model's "
        "limit) or shorten the prompt (fewer rules or examples)"
    )


def _encode(tokenizer: Any, text: str) -> Sequence[int]:
    try:  # verbose=False: a prompt over the model's length is what we are here to say, quietly
        return tokenizer.encode(text, add_special_tokens=False, verbose=False)  # type: ignore[no-any-return]
    except TypeError:  # a tokenizer that takes no `verbose`
        return tokenizer.encode(text, add_special_tokens=False)  # type: ignore[no-any-return]


def request_error_types() -> tuple[type[BaseException], ...]:
    """What vLLM raises for one request it refuses (not for an engine that failed)."""
    try:
        from vllm.exceptions import VLLMClientError
    except ImportError:  # an older vLLM: its request checks raise ValueError
        return (ValueError,)
    return (VLLMClientError, ValueError)


def read_model_json(model: str, name: str) -> dict[str, Any] | None:
    """A JSON object file of a local model directory (None for a hub id, or no such object)."""
    try:
        data = json.loads((Path(model).expanduser() / name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
