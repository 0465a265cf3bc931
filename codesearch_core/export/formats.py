"""The records each export format writes, built from `ExportRow`s. Pure: no store, no files.

* xLAM (`Salesforce/xlam-function-calling-60k`): `id`, `query`, and `tools` / `answers` as JSON
  *strings*; tools in xLAM's flat style (`{param: {"type": "str", "description", "default"}}`).
* Chat / SFT: OpenAI-style `messages` (system, user, assistant with `tool_calls` whose `arguments`
  is a JSON string) and `tools` as OpenAI function tools with JSON Schema parameters.
* Preference pairs (DPO, TRL's conversational preference format): `prompt` messages, `chosen` and
  `rejected` assistant messages, and `tools`.

The tool definitions (`tools/definitions.py`) are derived from the schemas, so a new argument shows up in every export. The
nested ast-grep `rule` is described, not spelled out: its unrolled schema is kilobytes, repeated on
every line, and validation happens against our own schema anyway.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from codesearch_core.engines import build_messages
from codesearch_core.store import ExportRow
from codesearch_core.tools import OPENAI_TOOLS, XLAM_TOOLS_JSON, openai_tools, xlam_tools


def prompt_messages(intent: str) -> list[dict[str, Any]]:
    """The prompt every single-call training layout opens with: exactly what `eval` and `propose`
    send a tool-calling model (`engines.build_messages`: the system message with the rules, then
    the intent), so a model is trained on the prompt it is judged on. The tools travel beside it
    (a record's `tools`), as the engines hand them to the chat template; a model whose template
    drops them is rendered with the project's tool template (`engines.tool_template_messages`)."""
    return build_messages(intent, template_tools=True)


#: The system message alone (ShareGPT's `system` column): the same prompt's first message.
SYSTEM_PROMPT: Final[str] = prompt_messages("")[0]["content"]
__all__ = ["OPENAI_TOOLS", "XLAM_TOOLS_JSON", "openai_tools", "xlam_tools"]


_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode


def _json_text(value: Any) -> str:
    """Compact JSON text, UTF-8 kept (msgspec: exports encode 100,000s of these)."""
    return _encode(value).decode("utf-8")


def _call(row: ExportRow) -> dict[str, Any]:
    assert row.call_json is not None
    call = _decode(row.call_json)
    return {"name": call["name"], "arguments": call["arguments"]}


def meta(row: ExportRow) -> dict[str, Any]:
    """Where a record came from: hashes, grade and reward, and the decision that let it in."""
    return {
        "blueprint_id": row.blueprint_id,
        "source": "counter-call"
        if row.counter_why
        else "reference"
        if row.proposal_id is None
        else "proposal",
        "proposal_id": row.proposal_id,
        "corpus": row.corpus,
        "language": row.language,
        "tool": row.tool,
        "intent_hash": row.intent_hash,
        "content_hash": row.content_hash,
        "call_hash": row.call_hash,
        "engine": row.engine,
        "model": row.model,
        "grade": None if row.grade is None else dict(row.grade),
        "reward": row.reward,
        "decision": None if row.decision is None else dict(row.decision),
        # Why a rejected answer is one: reviewers rejected it, its call failed to run, or it is
        # one of the blueprint's counter-calls (`why` says what is wrong with it).
        "run_failed": row.run_ok is False,
        **({"why": row.counter_why} if row.counter_why else {}),
    }


def xlam_record(index: int, row: ExportRow, *, with_meta: bool) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": index,
        "query": row.intent,
        "tools": XLAM_TOOLS_JSON,
        "answers": _json_text([_call(row)]),
    }
    if with_meta:
        record["meta"] = meta(row)
    return record


def assistant_message(row: ExportRow) -> dict[str, Any]:
    """The assistant turn: a tool call, or for a proposal without a valid call, its raw text."""
    if row.call_json is None:
        return {"role": "assistant", "content": row.raw_text}
    call = _call(row)
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                # Nine alphanumerics: the id shape the strictest chat templates (Mistral) accept.
                "id": (row.call_hash or "0" * 9)[:9],
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": _json_text(call["arguments"]),
                },
            }
        ],
    }


def chat_record(row: ExportRow, *, with_meta: bool) -> dict[str, Any]:
    record: dict[str, Any] = {
        "messages": [*prompt_messages(row.intent), assistant_message(row)],
        "tools": OPENAI_TOOLS,
    }
    if with_meta:
        record["meta"] = meta(row)
    return record


def pair_record(chosen: ExportRow, rejected: ExportRow, *, with_meta: bool) -> dict[str, Any]:
    record: dict[str, Any] = {
        "prompt": prompt_messages(chosen.intent),
        "chosen": [assistant_message(chosen)],
        "rejected": [assistant_message(rejected)],
        "tools": OPENAI_TOOLS,
    }
    if with_meta:
        record["meta"] = {"chosen": meta(chosen), "rejected": meta(rejected)}
    return record
