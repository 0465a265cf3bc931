"""A chat model's answer as the calls of one turn, in OpenAI's `tool_calls` shape.

A server's tool parser hands its calls over as `tool_calls`; they are taken as they are (an entry
the parser botched is the environment's to refuse). Text — what vLLM in this process writes, or a
server without a tool parser — is read in the model's own tool format (`engines.ToolFormat`):
every call block of it, since one assistant message holds the turn's parallel calls (Hermes writes
one `<tool_call>` block each, xLAM and Mistral a list, Llama 3.1 objects one after another).

What reads as no call at all (prose, an empty answer) is an empty turn: the agent ended the
episode. A call that does not decode is still a call — a `function` whose `arguments` is the text
it wrote — so the environment refuses it (`malformed_json`, or `malformed_call` when not even the
tool name can be read) and it counts against the budget, as a weak model's mistake should.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from codesearch_core.engines import ToolFormat

_NAME: Final = re.compile(r'"name"\s*:\s*"([^"\\]{1,200})"')


def call_id(turn: int, index: int) -> str:
    return f"call_{turn}_{index}"


def _function(turn: int, index: int, name: Any, arguments: Any) -> dict[str, Any]:
    return {
        "id": call_id(turn, index),
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def server_calls(tool_calls: Sequence[Any], turn: int) -> list[dict[str, Any]]:
    """A server's `tool_calls`, each with an id (the tool message answers it by that id)."""
    calls: list[dict[str, Any]] = []
    for i, entry in enumerate(tool_calls):
        if isinstance(entry, Mapping):
            given = entry.get("id")
            calls.append({**entry, "id": given if isinstance(given, str) and given else
                          call_id(turn, i)})  # fmt: skip
        else:  # not a call object at all: refused as malformed, answered all the same
            calls.append(_function(turn, i, None, entry))
    return calls


def _as_call(value: Any, tool_format: ToolFormat, turn: int, index: int) -> dict[str, Any]:
    """One decoded value as a call; the format's own argument key (`parameters`) read as ours."""
    if isinstance(value, Mapping):
        arguments = value.get("arguments")
        if arguments is None and tool_format.arguments_key != "arguments":
            arguments = value.get(tool_format.arguments_key)
        return _function(turn, index, value.get("name"), arguments)
    return _function(turn, index, None, value)


def _undecodable(text: str, turn: int, index: int) -> dict[str, Any]:
    """A call whose JSON does not decode: its name if it can be read (the refusal then says what
    is wrong with the JSON), and the text it wrote as its arguments."""
    found = _NAME.search(text)
    return _function(turn, index, found.group(1) if found else None, text)


def _decode_all(text: str) -> tuple[list[Any], bool]:
    """The JSON values `text` holds one after another (white space, `;` or `,` between them), and
    whether all of it decoded. Control characters inside strings are let through, as the engines'
    own reader does (models write raw tabs and newlines there)."""
    decoder = json.JSONDecoder(strict=False)
    values: list[Any] = []
    at = 0
    while True:
        while at < len(text) and text[at] in " \t\r\n;,":
            at += 1
        if at >= len(text):
            return values, True
        try:
            value, at = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            return values, False
        values.append(value)


def _block_calls(body: str, tool_format: ToolFormat, turn: int, first: int) -> list[dict[str, Any]]:
    """The calls of one block's JSON (a list of them in a list format); a tail that does not
    decode (the answer was cut at max_tokens, or is not JSON) is one more, malformed, call."""
    values, whole = _decode_all(body.strip())
    items = [
        item
        for value in values
        for item in (value if tool_format.as_list and isinstance(value, list) else [value])
    ]
    calls = [_as_call(item, tool_format, turn, first + i) for i, item in enumerate(items)]
    if not whole or not items:  # an empty block is a call too: one that names nothing
        calls.append(_undecodable(body, turn, first + len(calls)))
    return calls


def text_calls(text: str, tool_format: ToolFormat, turn: int) -> list[dict[str, Any]]:
    """The calls `text` writes in `tool_format` (module docstring); [] when it writes none."""
    begin, end = tool_format.begin.strip(), tool_format.end.strip()
    if begin and begin in text:
        calls: list[dict[str, Any]] = []
        for block in text.split(begin)[1:]:
            body = block.split(end, 1)[0] if end and end in block else block
            calls.extend(_block_calls(body, tool_format, turn, len(calls)))
        return calls
    stripped = text.strip()
    if stripped.startswith("```"):  # a fenced call: the fence is not part of it
        stripped = stripped.strip("`").removeprefix("json").strip()
    if not stripped.startswith(("{", "[")):
        return []  # prose: the model answered without calling a tool
    return _block_calls(stripped, tool_format, turn, 0)
