"""The one prompt every model engine uses: rules for choosing a tool, examples, the intent.

The messages are plain OpenAI-style chat messages, so the same prompt goes to `LLM.chat` and to an
OpenAI-compatible server. How the tools reach the model depends on its tool format
(`tool_format.py`): a tool-calling model gets them through its chat template (`tools=` with
`OPENAI_TOOLS`) and sees few-shot examples as earlier assistant turns with `tool_calls` and their
tool results, exactly as it was trained; the `json` fallback, for models without a tool template,
describes the tools in the system message and shows examples as bare JSON answers.

The prompt a proposal was made with is stored beside it as JSON (`messages_to_json`);
`messages_to_text` renders it for people.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from codesearch_core.models import ToolCall, ToolName
from codesearch_core.tools import (
    AST_GREP_LANGUAGES,
    TOOL_CALL_SCHEMA,
    TOOL_DESCRIPTIONS,
    arguments_schema,
)

Message = dict[str, Any]
SchemaMode = Literal["compact", "full", "none"]

#: Why each rule is here: these are the mistakes the mutation engine imitates.
DEFAULT_RULES: Final[tuple[str, ...]] = (
    "Choose the tool by what the intent is about. Code structure (calls, definitions, async "
    "functions, JSX elements, imports) → ast_grep_search: it matches syntax trees, so comments and "
    "strings never match. Text (TODO markers, log lines, config keys, messages inside strings) → "
    "ripgrep_search.",
    "ripgrep patterns are Rust regexes. Look-arounds ((?=...), (?!...), (?<=...), (?<!...)) and "
    'back-references (\\1) need PCRE2: set "pcre2": true whenever the pattern uses them.',
    "When the intent names a language, restrict ripgrep with file_types (rg -t names such as c, "
    "cpp, go, py, js, ts, rust, java): otherwise `printf` in C also finds `fmt.Printf` in Go.",
    "Only set paths when the intent names a directory or file; paths are relative to the corpus "
    "root. Do not widen the search to parent directories.",
    "ast_grep_search needs one of ast-grep's language names: "
    + ", ".join(AST_GREP_LANGUAGES)
    + ".",
)
#: Only for the `json` fallback: a tool-calling model's template says how to answer.
JSON_ANSWER_RULE: Final = (
    'Answer with exactly one JSON object {"name": ..., "arguments": {...}} and nothing else.'
)

DEFAULT_SYSTEM: Final = "You turn a code-search request into exactly one tool call."


@dataclass(frozen=True, slots=True)
class PromptConfig:
    """What goes into the prompt. `schema`: the compact argument list, the full JSON Schema, or none."""

    system: str = DEFAULT_SYSTEM
    rules: tuple[str, ...] = DEFAULT_RULES
    schema: SchemaMode = "compact"
    max_examples: int = 4


@dataclass(frozen=True, slots=True)
class Example:
    """A few-shot example: an intent and the call a curator accepted for it."""

    intent: str
    call: ToolCall
    #: What the tool returned, as the tool turn shows it (template formats only).
    result: str = ""


def build_messages(
    intent: str,
    config: PromptConfig | None = None,
    examples: Sequence[Example] = (),
    *,
    template_tools: bool = False,
) -> list[Message]:
    """The chat messages for one intent: system, example turns, then the intent.

    `template_tools=False` (the `json` fallback): the system message also holds the answer rule
    and the tool schema, and examples are bare JSON answers. `template_tools=True`: the tools go
    to the chat template separately, and examples are `tool_calls` turns with their results.
    """
    config = config or PromptConfig()
    parts = [config.system.strip()]
    rules = list(config.rules)
    if not template_tools and rules:
        rules.append(JSON_ANSWER_RULE)
    if rules:
        parts.append("Rules:\n" + "\n".join(f"- {rule}" for rule in rules))
    schema_text = "" if template_tools else _schema_text(config.schema)
    if schema_text:
        parts.append(schema_text)
    messages: list[Message] = [{"role": "system", "content": "\n\n".join(p for p in parts if p)}]
    for number, example in enumerate(list(examples)[: max(config.max_examples, 0)], 1):
        messages.append({"role": "user", "content": example.intent})
        if not template_tools:
            messages.append({"role": "assistant", "content": example.call.to_json()})
            continue
        call_id = f"call_{number}"
        call = example.call.to_dict()
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        # A JSON string, as the OpenAI API wants; vLLM decodes it to the dict
                        # Hugging Face templates expect before rendering.
                        "function": {
                            "name": call["name"],
                            "arguments": json.dumps(call["arguments"], ensure_ascii=False),
                        },
                    }
                ],
            }
        )
        messages.append(
            {"role": "tool", "tool_call_id": call_id, "content": example.result or "(done)"}
        )
    messages.append({"role": "user", "content": intent})
    return messages


def messages_to_json(messages: Sequence[Message]) -> str:
    """The stored form of a prompt (Proposal.prompt)."""
    return json.dumps(list(messages), ensure_ascii=False)


def messages_to_text(messages: Sequence[Message]) -> str:
    """A readable rendering: each message under its role, tool calls as their JSON."""
    blocks = []
    for message in messages:
        text = str(message.get("content") or "")
        for call in message.get("tool_calls") or ():
            function = call.get("function", {})
            text += f"\ntool call {function.get('name')}: {function.get('arguments')}"
        blocks.append(f"[{message['role']}]\n{text.strip()}")
    return "\n\n".join(blocks)


def _schema_text(mode: SchemaMode) -> str:
    if mode == "none":
        return ""
    if mode == "full":
        return "JSON Schema of the answer:\n" + json.dumps(TOOL_CALL_SCHEMA, ensure_ascii=False)
    lines = ["Tools:"]
    for tool in ToolName:
        lines.append(f"- {tool.value}: {TOOL_DESCRIPTIONS[tool]}")
        lines.append(f"  arguments: {_compact_arguments(tool)}")
        if tool is ToolName.AST_GREP:
            lines.append(
                "  or, instead of pattern: rule (an ast-grep rule object with kind, pattern, "
                "regex, has, inside, not, all, any, stopBy)"
            )
    return "\n".join(lines)


def _compact_arguments(tool: ToolName) -> str:
    schema = arguments_schema(tool)
    required = set(schema.get("required", ()))
    fields = []
    for name, spec in schema["properties"].items():
        kind = spec.get("type", "object")
        if "enum" in spec:
            kind = "language name" if name == "language" else "one of " + "|".join(spec["enum"])
        elif kind == "array":
            kind = "list of strings"
        fields.append(f"{name} ({kind}{', required' if name in required else ''})")
    return ", ".join(fields)
