"""Turn what a model wrote into a valid tool call, or into a precise reason why not.

Two steps, kept apart so each is testable on captured text:

* `parse_model_output` decodes the raw text (or says why it cannot: cut at `max_tokens`, not JSON).
* `validate_and_repair` fixes the mistakes models make over and over (aliases, shapes, a missing
  `pcre2`), records every fix as a short sentence, and validates against the schema.

Nothing is dropped silently: an output that cannot be repaired comes back with its error, and the
caller keeps the raw text beside it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final, NamedTuple

from codesearch_core.errors import ToolCallError
from codesearch_core.models import ToolCall, ToolName
from codesearch_core.tools import (
    AST_GREP_LANGUAGES,
    AST_GREP_PATTERN_ARGUMENTS,
    AST_GREP_RULE_ARGUMENTS,
    RIPGREP_ARGUMENTS,
    parse_tool_call,
    requires_pcre2,
)

LENGTH_ERROR: Final = "finish_reason=length: output cut at max_tokens"
CONTROL_CHARS_REPAIR: Final = "control characters in strings"
#: Python's JSON decoder recurses once per level and stops near 1,000 levels; a tool call has about
#: ten, so output this deep is garbage (a looping model), not a call to repair.
NESTING_TOO_DEEP: Final = "nesting too deep to decode (over ~1,000 levels of arrays or objects)"
NESTING_ERROR: Final = f"invalid JSON: {NESTING_TOO_DEEP}"

#: Names models use for the tools, mapped to ours.
TOOL_ALIASES: Final[dict[str, ToolName]] = {
    "ast_grep": ToolName.AST_GREP,
    "ast-grep": ToolName.AST_GREP,
    "astgrep": ToolName.AST_GREP,
    "ast_grep_search": ToolName.AST_GREP,
    "ast-grep-search": ToolName.AST_GREP,
    "sg": ToolName.AST_GREP,
    "ripgrep": ToolName.RIPGREP,
    "ripgrep_search": ToolName.RIPGREP,
    "ripgrep-search": ToolName.RIPGREP,
    "rg": ToolName.RIPGREP,
    "grep": ToolName.RIPGREP,
}

#: ast-grep language aliases. ast-grep has no `jsx`: its javascript grammar parses JSX.
LANGUAGE_ALIASES: Final[dict[str, str]] = {
    "js": "javascript",
    "jsx": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "node": "javascript",
    "ecmascript": "javascript",
    "py": "python",
    "python3": "python",
    "ts": "typescript",
    "mts": "typescript",
    "golang": "go",
    "c++": "cpp",
    "cxx": "cpp",
    "cc": "cpp",
    "hpp": "cpp",
    "rs": "rust",
    "sh": "bash",
    "shell": "bash",
    "zsh": "bash",
    "cs": "csharp",
    "c#": "csharp",
    "kt": "kotlin",
    "rb": "ruby",
    "yml": "yaml",
    "tf": "hcl",
    "terraform": "hcl",
    "ex": "elixir",
    "exs": "elixir",
    "hs": "haskell",
    "sol": "solidity",
}

#: rg `-t` names models write that rg does not know, mapped to names it does (`rg --type-list`).
FILE_TYPE_ALIASES: Final[dict[str, str]] = {
    "javascript": "js",
    "jsx": "js",
    "tsx": "ts",
    "golang": "go",
    "rs": "rust",
    "c++": "cpp",
    "cxx": "cpp",
    "shell": "sh",
    "bash": "sh",
    "zsh": "sh",
    "rb": "ruby",
    "kt": "kotlin",
    "yml": "yaml",
}

#: Argument names models use, per tool, mapped to the schema's.
_ARGUMENT_ALIASES: Final[dict[ToolName, dict[str, str]]] = {
    ToolName.AST_GREP: {"lang": "language", "path": "paths", "query": "pattern"},
    ToolName.RIPGREP: {
        "regex": "pattern",
        "query": "pattern",
        "path": "paths",
        "type": "file_types",
        "types": "file_types",
        "file_type": "file_types",
        "glob": "globs",
        "context": "context_lines",
        "fixed_string": "fixed_strings",
        "word_regexp": "word",
        "pcre": "pcre2",
    },
}

_LIST_FIELDS: Final = ("paths", "globs", "file_types")
_BOOL_FIELDS: Final = (
    "case_sensitive",
    "smart_case",
    "fixed_strings",
    "word",
    "multiline",
    "pcre2",
)
_ARGUMENT_KEYS: Final = ("arguments", "args", "parameters", "params", "input")
_NAME_KEYS: Final = ("name", "tool", "tool_name", "function")


class ParsedOutput(NamedTuple):
    """Decoded model output: the JSON value (None when it could not be decoded), why not, and fixes.

    `calls`: how many calls the text wrote in its tool format; `value` is the first. Only the first
    is run, so whoever scores the text (the RL reward) can charge the others as effort.
    """

    value: Any
    error: str
    repairs: tuple[str, ...]
    calls: int = 1


class RepairResult(NamedTuple):
    """A valid call with the repairs that made it valid, or None and the precise schema error."""

    call: ToolCall | None
    repairs: tuple[str, ...]
    error: str


_BETWEEN_CALLS = re.compile(r"[ \t\r\n;,]*")
_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n?(.*?)\n?\s*```$", re.DOTALL)


def parse_model_output(raw_text: str, finish_reason: str | None = None) -> ParsedOutput:
    """Decode what a model wrote. `finish_reason == "length"` is an error whatever the text holds.

    Never raises: text nested deeper than Python's decoder can follow is `NESTING_ERROR`.
    """
    if finish_reason == "length":
        return ParsedOutput(None, LENGTH_ERROR, ())
    repairs: list[str] = []
    # Positions in errors refer to the raw text as stored, so it is not stripped unless fenced.
    text = raw_text
    fenced = _FENCE.match(raw_text.strip())
    if fenced:
        text = fenced.group(1)
        repairs.append("markdown code fence removed")
    if not text.strip():
        return ParsedOutput(None, "empty output: the model wrote no JSON", tuple(repairs))
    try:
        return _decode(text, repairs)
    except RecursionError:
        return ParsedOutput(None, NESTING_ERROR, tuple(repairs))


def _more_calls(decoder: json.JSONDecoder, text: str, end: int) -> int:
    """How many more JSON objects follow the first one in `text` (from `end`), each after white
    space, `;` or `,`: the further calls of a model that wrote several (Llama 3.1 separates them
    with `; `). Stops at the first thing that is not an object."""
    more = 0
    while True:
        between = _BETWEEN_CALLS.match(text, end)
        end = between.end() if between else end
        if end >= len(text) or text[end] != "{":
            return more
        try:
            value, end = decoder.raw_decode(text, end)
        except (ValueError, RecursionError):
            return more
        if not isinstance(value, dict):
            return more
        more += 1


def _decode(text: str, repairs: list[str]) -> ParsedOutput:
    value, problem = _loads(text, strict=True)
    if problem is None:
        return ParsedOutput(value, "", tuple(repairs))
    # Guided decoding with weak (or random) weights emits raw control characters inside strings:
    # the grammar allows them, strict JSON does not. The value is otherwise what was meant.
    if problem.msg.startswith("Invalid control character"):
        repairs.append(CONTROL_CHARS_REPAIR)
        value, problem = _loads(text, strict=False)
        if problem is None:
            return ParsedOutput(value, "", tuple(repairs))
    # Chatty models write the object and then keep talking.
    if problem.msg == "Extra data":
        decoder = json.JSONDecoder(strict=False)
        value, end = decoder.raw_decode(text)
        calls = 1 + _more_calls(decoder, text, end) if isinstance(value, dict) else 1
        return ParsedOutput(value, "", (*repairs, "text after the JSON value dropped"), calls)
    return ParsedOutput(
        None,
        f"invalid JSON: {problem.msg} at line {problem.lineno} column {problem.colno} "
        f"(char {problem.pos})",
        tuple(r for r in repairs if r != CONTROL_CHARS_REPAIR),
    )


def _loads(text: str, *, strict: bool) -> tuple[Any, json.JSONDecodeError | None]:
    try:
        return json.loads(text, strict=strict), None
    except json.JSONDecodeError as err:
        return None, err


def validate_and_repair(obj: Any) -> RepairResult:
    """Fix the usual mistakes in a decoded call, record each fix, then validate against the schema.

    Never raises: whatever `obj` is, the result is a valid call or the precise reason why not.
    """
    repairs: list[str] = []
    try:
        canonical = _canonical_shape(obj, repairs)
        if canonical is None:
            # Nothing recognisable to repair: let the schema say precisely what is wrong.
            return RepairResult(parse_tool_call(obj), (), "")
        tool, arguments = canonical
        arguments = _repair_arguments(tool, arguments, repairs)
        call = parse_tool_call({"name": tool.value, "arguments": arguments})
    except ToolCallError as err:
        return RepairResult(None, tuple(repairs), str(err))
    except RecursionError:
        # `arguments` as a JSON string is decoded here, and the schema walks the value: either
        # can meet nesting deeper than Python follows.
        return RepairResult(None, tuple(repairs), f"arguments: {NESTING_ERROR}")
    return RepairResult(call, tuple(repairs), "")


def _canonical_shape(obj: Any, repairs: list[str]) -> tuple[ToolName, dict[str, Any]] | None:
    """`(tool, arguments)` from the shapes models use, or None when `obj` is no call-like object."""
    if isinstance(obj, list) and len(obj) == 1:
        repairs.append("single-element list unwrapped")
        obj = obj[0]
    if not isinstance(obj, Mapping):
        return None
    if "tool_calls" in obj and isinstance(obj["tool_calls"], list) and obj["tool_calls"]:
        repairs.append("first of `tool_calls` taken")
        obj = obj["tool_calls"][0]
        if not isinstance(obj, Mapping):
            return None
    # OpenAI style: {"type": "function", "function": {"name": ..., "arguments": "<json>"}}
    if isinstance(obj.get("function"), Mapping):
        repairs.append("OpenAI `function` wrapper unwrapped")
        obj = obj["function"]
    name_key = next((k for k in _NAME_KEYS if isinstance(obj.get(k), str)), None)
    if name_key is None:
        return None
    raw_name = obj[name_key]
    if name_key != "name":
        repairs.append(f"`{name_key}` renamed to `name`")
    tool = _tool_name(raw_name, repairs)
    args_key = next((k for k in _ARGUMENT_KEYS if k in obj), None)
    if args_key is None:
        raise ToolCallError("missing: a call needs `name` and `arguments`", "arguments")
    arguments: Any = obj[args_key]
    if args_key != "arguments":
        repairs.append(f"`{args_key}` renamed to `arguments`")
    unknown = sorted(set(obj) - {name_key, args_key})
    if unknown:
        repairs.append(f"unknown field(s) dropped: {', '.join(unknown)}")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments, strict=False)
        except json.JSONDecodeError as err:
            raise ToolCallError(
                f"a JSON string that does not decode ({err.msg} at char {err.pos})", "arguments"
            ) from None
        repairs.append("`arguments` decoded from a JSON string")
    if not isinstance(arguments, Mapping):
        raise ToolCallError("must be a JSON object", "arguments")
    return tool, dict(arguments)


def _tool_name(raw: str, repairs: list[str]) -> ToolName:
    if raw in (t.value for t in ToolName):
        return ToolName(raw)
    key = raw.strip().lower()
    if key in TOOL_ALIASES:
        tool = TOOL_ALIASES[key]
        repairs.append(f"tool name {raw!r} → {tool.value}")
        return tool
    valid = ", ".join(t.value for t in ToolName)
    raise ToolCallError(f"{raw!r} is not one of: {valid}", "name")


def _repair_arguments(tool: ToolName, args: dict[str, Any], repairs: list[str]) -> dict[str, Any]:
    for alias, target in _ARGUMENT_ALIASES[tool].items():
        if alias in args and target not in args:
            args[target] = args.pop(alias)
            repairs.append(f"argument `{alias}` renamed to `{target}`")
    if tool is ToolName.RIPGREP and "ignore_case" in args and "case_sensitive" not in args:
        value = args.pop("ignore_case")
        if isinstance(value, bool):
            args["case_sensitive"] = not value
            repairs.append(f"`ignore_case: {_js(value)}` → `case_sensitive: {_js(not value)}`")
    known = _known_arguments(tool)
    unknown = sorted(k for k in args if k not in known)
    if unknown:
        for k in unknown:
            del args[k]
        repairs.append(f"unknown argument(s) dropped: {', '.join(unknown)}")
    for key in _LIST_FIELDS:
        value = args.get(key)
        if isinstance(value, str):
            items = [v for v in re.split(r"[,\s]+", value) if v] if key == "file_types" else [value]
            args[key] = items
            repairs.append(f"`{key}` string → list {items!r}")
    for key in _BOOL_FIELDS:
        value = args.get(key)
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            args[key] = value.strip().lower() == "true"
            repairs.append(f"`{key}` string {value!r} → boolean")
    context = args.get("context_lines")
    if isinstance(context, str) and context.strip().isdigit():
        args["context_lines"] = int(context)
        repairs.append(f"`context_lines` string {context!r} → integer")
    if tool is ToolName.AST_GREP:
        _repair_language(args, repairs)
    else:
        _repair_file_types(args, repairs)
        _repair_pcre2(args, repairs)
    return args


def _known_arguments(tool: ToolName) -> frozenset[str]:
    if tool is ToolName.RIPGREP:
        return frozenset(RIPGREP_ARGUMENTS["properties"])
    return frozenset(AST_GREP_PATTERN_ARGUMENTS["properties"]) | frozenset(
        AST_GREP_RULE_ARGUMENTS["properties"]
    )


def _repair_language(args: dict[str, Any], repairs: list[str]) -> None:
    language = args.get("language")
    if not isinstance(language, str) or language in AST_GREP_LANGUAGES:
        return
    key = language.strip().lower()
    fixed = LANGUAGE_ALIASES.get(key, key if key in AST_GREP_LANGUAGES else None)
    if fixed is not None:
        args["language"] = fixed
        repairs.append(f"language {language!r} → {fixed!r}")


def _repair_file_types(args: dict[str, Any], repairs: list[str]) -> None:
    types = args.get("file_types")
    if not isinstance(types, list):
        return
    fixed: list[Any] = []
    for t in types:
        new = FILE_TYPE_ALIASES.get(t.strip().lower(), t) if isinstance(t, str) else t
        if new != t:
            repairs.append(f"file type {t!r} → {new!r}")
        if new in fixed:
            # `["js", "javascript"]` becomes `["js", "js"]` above; rg would search the type once.
            repairs.append(f"repeated file type {new!r} dropped")
        else:
            fixed.append(new)
    args["file_types"] = fixed


def _repair_pcre2(args: dict[str, Any], repairs: list[str]) -> None:
    pattern = args.get("pattern")
    if not isinstance(pattern, str) or args.get("pcre2") is True or args.get("fixed_strings"):
        return
    if requires_pcre2(pattern):
        args["pcre2"] = True
        repairs.append("pcre2 set: the pattern uses a look-around or back-reference")


def _js(value: bool) -> str:
    return "true" if value else "false"
