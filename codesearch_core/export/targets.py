"""The records of the per-trainer export formats, each in the layout its reader takes. Pure: the
rows and their observed runs come in, dicts go out.

* `hf-chat`: `messages` + `tools`, `tool_calls[].function.arguments` a *dict*: what
  `tokenizer.apply_chat_template(messages, tools=...)` and TRL's `SFTTrainer` take (a JSON string
  there is rendered twice-encoded by Qwen, Llama 3.1 and Hermes templates).
* `openai-sft`: OpenAI's chat fine-tuning layout: `arguments` a JSON *string*, the tool result as
  a `tool` message with its `tool_call_id`, `tools` and `parallel_tool_calls`.
* `sharegpt`: LLaMA-Factory's `conversations` (`human`, `function_call`, `observation`, `gpt`),
  `system`, and `tools` as a JSON string; `dataset_info_entry` is what its `dataset_info.json` needs.
* `hf-preference`: TRL's conversational preference layout (`prompt`, `chosen`, `rejected`, `tools`)
  with the graded rewards and their `margin` (the column TRL's `RewardTrainer` reads).
* `openai-dpo`: OpenAI's preference layout (`input`, `preferred_output`, `non_preferred_output`).
* `hf-prompts`: prompt-only rows for GRPO, with `blueprint_id` for the reward function.

The SFT layouts end with the tool's real output (truncated, `export.observe`) and a closing answer
that names what it found, so a model trained on them sees what the tool returns.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from codesearch_core.export.formats import SYSTEM_PROMPT, meta, prompt_messages
from codesearch_core.export.observe import Observed
from codesearch_core.store import ExportRow
from codesearch_core.tools import OPENAI_TOOLS, observation_text, summary_text

_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode

#: The function definitions alone (name, description, parameters): LLaMA-Factory's tool string.
FUNCTIONS: Final = [tool["function"] for tool in OPENAI_TOOLS]
FUNCTIONS_JSON: Final = _encode(FUNCTIONS).decode("utf-8")


def _text(value: Any) -> str:
    return _encode(value).decode("utf-8")


def _call(row: ExportRow) -> dict[str, Any]:
    assert row.call_json is not None
    call = _decode(row.call_json)
    return {"name": call["name"], "arguments": call["arguments"]}


def _call_id(row: ExportRow) -> str:
    # Nine alphanumerics: the id shape the strictest chat templates (Mistral) accept.
    return (row.call_hash or "0" * 9)[:9]


def tool_call_message(row: ExportRow, *, string_arguments: bool) -> dict[str, Any]:
    """The assistant turn that calls the tool; for a proposal without a valid call, its raw text."""
    if row.call_json is None:
        return {"role": "assistant", "content": row.raw_text}
    call = _call(row)
    arguments = _text(call["arguments"]) if string_arguments else call["arguments"]
    function = {"name": call["name"], "arguments": arguments}
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": _call_id(row), "type": "function", "function": function}],
    }


def _with_meta(record: dict[str, Any], row: ExportRow, observed: Observed | None) -> dict[str, Any]:
    info = meta(row)
    if observed is not None:
        info["observed_reward"] = observed.reward
    record["meta"] = info
    return record


def hf_chat_record(row: ExportRow, observed: Observed, *, with_meta: bool) -> dict[str, Any]:
    call = _call(row)
    messages = [
        *prompt_messages(row.intent),
        tool_call_message(row, string_arguments=False),
        {
            "role": "tool",
            "name": call["name"],
            "tool_call_id": _call_id(row),
            "content": observation_text(observed.run),
        },
        {"role": "assistant", "content": summary_text(observed.run)},
    ]
    record: dict[str, Any] = {"messages": messages, "tools": OPENAI_TOOLS}
    return _with_meta(record, row, observed) if with_meta else record


def openai_sft_record(row: ExportRow, observed: Observed, *, with_meta: bool) -> dict[str, Any]:
    messages = [
        *prompt_messages(row.intent),
        tool_call_message(row, string_arguments=True),
        {
            "role": "tool",
            "tool_call_id": _call_id(row),
            "content": observation_text(observed.run),
        },
        {"role": "assistant", "content": summary_text(observed.run)},
    ]
    record: dict[str, Any] = {
        "messages": messages,
        "tools": OPENAI_TOOLS,
        "parallel_tool_calls": False,
    }
    return _with_meta(record, row, observed) if with_meta else record


def sharegpt_record(row: ExportRow, observed: Observed, *, with_meta: bool) -> dict[str, Any]:
    conversations = [
        {"from": "human", "value": row.intent},
        {"from": "function_call", "value": _text(_call(row))},
        {"from": "observation", "value": observation_text(observed.run)},
        {"from": "gpt", "value": summary_text(observed.run)},
    ]
    record: dict[str, Any] = {
        "conversations": conversations,
        "system": SYSTEM_PROMPT,
        "tools": FUNCTIONS_JSON,
    }
    return _with_meta(record, row, observed) if with_meta else record


def dataset_info_entry(file_name: str) -> dict[str, Any]:
    """The `dataset_info.json` entry LLaMA-Factory needs to read a `sharegpt` export."""
    return {
        "file_name": file_name,
        "formatting": "sharegpt",
        "columns": {"messages": "conversations", "system": "system", "tools": "tools"},
        "tags": {
            "role_tag": "from",
            "content_tag": "value",
            "user_tag": "human",
            "assistant_tag": "gpt",
            "observation_tag": "observation",
            "function_tag": "function_call",
            "system_tag": "system",
        },
    }


def hf_preference_record(
    chosen: ExportRow,
    rejected: ExportRow,
    rewards: tuple[float, float],
    *,
    with_meta: bool,
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "prompt": prompt_messages(chosen.intent),
        "chosen": [tool_call_message(chosen, string_arguments=False)],
        "rejected": [tool_call_message(rejected, string_arguments=False)],
        "tools": OPENAI_TOOLS,
        "chosen_reward": rewards[0],
        "rejected_reward": rewards[1],
        "margin": rewards[0] - rewards[1],
    }
    if with_meta:
        record["meta"] = {"chosen": meta(chosen), "rejected": meta(rejected)}
    return record


def openai_dpo_record(
    chosen: ExportRow,
    rejected: ExportRow,
    rewards: tuple[float, float],
    *,
    with_meta: bool,
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "input": {
            "messages": prompt_messages(chosen.intent),
            "tools": OPENAI_TOOLS,
            "parallel_tool_calls": False,
        },
        "preferred_output": [tool_call_message(chosen, string_arguments=True)],
        "non_preferred_output": [tool_call_message(rejected, string_arguments=True)],
    }
    if with_meta:
        record["meta"] = {
            "chosen": meta(chosen),
            "rejected": meta(rejected),
            "rewards": list(rewards),
        }
    return record


def hf_prompts_record(row: ExportRow, *, with_meta: bool) -> dict[str, Any]:
    """One blueprint as a GRPO prompt: the reward function finds its corpus and expected spans by
    `blueprint_id` (TRL passes every extra column to the reward functions)."""
    record: dict[str, Any] = {
        "prompt": prompt_messages(row.intent),
        "tools": OPENAI_TOOLS,
        "blueprint_id": row.blueprint_id,
        "corpus": row.corpus,
        "language": row.language,
    }
    if with_meta:
        record["meta"] = meta(row)
    return record
