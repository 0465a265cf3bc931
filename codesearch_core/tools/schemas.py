"""JSON Schemas for tool calls and composite plans, and their validation.

The same schemas drive three things: guided decoding in vLLM (so they must compile in xgrammar:
no `uniqueItems`, no unbounded recursion), validation of anything that arrives from outside, and the
forms in the app. Every object is closed (`additionalProperties: false`) and every string and list
is bounded, so a model cannot ramble inside a valid call.

`parse_tool_call` also refuses, after the schema, text no tool can take: a NUL byte (no program
argument can hold one) and a lone surrogate (valid JSON `"\\ud800"`, but not Unicode text: it cannot
be encoded, hashed as UTF-8 or stored). The schemas do not say so with a `pattern`, because
xgrammar then drops a string's `maxLength`, and a guided model could ramble again.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from codesearch_core.errors import ToolCallError
from codesearch_core.models import Plan, PlanStep, ToolCall, ToolName

if TYPE_CHECKING:  # jsonschema takes ~0.1 s to import: loaded by the first check, not at start-up
    import jsonschema

#: ast-grep's own language names (`ast-grep run --lang`). Aliases such as `js` are repaired, not accepted.
AST_GREP_LANGUAGES: Final[tuple[str, ...]] = (
    "bash", "c", "cpp", "csharp", "css", "dart", "elixir", "go", "haskell", "hcl", "html", "java",
    "javascript", "json", "kotlin", "lua", "nix", "php", "python", "ruby", "rust", "scala",
    "solidity", "swift", "tsx", "typescript", "yaml",
)  # fmt: skip

_NUL: Final = "\x00"
MAX_PATTERN_CHARS: Final = 1000
MAX_PATH_CHARS: Final = 256
MAX_PATHS: Final = 16
MAX_GLOBS: Final = 8
MAX_FILE_TYPES: Final = 8
MAX_CONTEXT_LINES: Final = 10
MAX_PLAN_STEPS: Final = 3
#: Nesting depth of structured ast-grep rules (has/inside/not/all/any). Bounded so the grammar is finite.
MAX_RULE_DEPTH: Final = 3
MAX_RULE_BRANCHES: Final = 4

_PATTERN = {"type": "string", "minLength": 1, "maxLength": MAX_PATTERN_CHARS}
_PATHS = {
    "type": "array",
    "items": {"type": "string", "minLength": 1, "maxLength": MAX_PATH_CHARS},
    "maxItems": MAX_PATHS,
    "description": "Files or directories relative to the corpus root; omit to search everything.",
}


def _rule_schema(depth: int) -> dict[str, Any]:
    """An ast-grep rule object whose nested rules are `rule{depth-1}`: recursion unrolled, not $ref'd."""
    props: dict[str, Any] = {
        # Length bounds go inside the regex: vLLM refuses pattern + maxLength for xgrammar.
        "kind": {"type": "string", "pattern": "^[a-z_][a-z0-9_]{0,63}$"},
        "pattern": _PATTERN,
        "regex": _PATTERN,
        "stopBy": {"type": "string", "enum": ["neighbor", "end"]},
    }
    if depth > 0:
        inner = {"$ref": f"#/$defs/rule{depth - 1}"}
        branches = {"type": "array", "items": inner, "minItems": 1, "maxItems": MAX_RULE_BRANCHES}
        props.update(
            {"has": inner, "inside": inner, "not": inner, "all": branches, "any": branches}
        )
    return {
        "type": "object",
        "properties": props,
        "additionalProperties": False,
        "minProperties": 1,
    }


#: Shared by every schema that embeds a rule; `$ref`s resolve against the root document.
_RULE_DEFS: Final[dict[str, Any]] = {f"rule{d}": _rule_schema(d) for d in range(MAX_RULE_DEPTH + 1)}
_RULE_REF: Final = {"$ref": f"#/$defs/rule{MAX_RULE_DEPTH}"}

AST_GREP_PATTERN_ARGUMENTS: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "pattern": {**_PATTERN, "description": "ast-grep pattern, e.g. `DB.query($$$ARGS)`."},
        "language": {"type": "string", "enum": list(AST_GREP_LANGUAGES)},
        "paths": _PATHS,
    },
    "required": ["pattern", "language"],
    "additionalProperties": False,
}

AST_GREP_RULE_ARGUMENTS: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "rule": _RULE_REF,
        "language": {"type": "string", "enum": list(AST_GREP_LANGUAGES)},
        "paths": _PATHS,
    },
    "required": ["rule", "language"],
    "additionalProperties": False,
    "$defs": _RULE_DEFS,
}

RIPGREP_ARGUMENTS: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "pattern": {**_PATTERN, "description": "Regex (Rust syntax, or PCRE2 when pcre2 is true)."},
        "file_types": {
            "type": "array",
            "items": {"type": "string", "pattern": "^[A-Za-z0-9_+-]{1,32}$"},
            "maxItems": MAX_FILE_TYPES,
            "description": "rg -t type names, e.g. ['c'], ['py'], ['js', 'ts'].",
        },
        "globs": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": MAX_PATH_CHARS},
            "maxItems": MAX_GLOBS,
            "description": "rg -g globs; a leading ! excludes.",
        },
        "paths": _PATHS,
        "case_sensitive": {"type": "boolean", "description": "false: -i. Default true."},
        "smart_case": {"type": "boolean", "description": "true: -S (overrides case_sensitive)."},
        "fixed_strings": {"type": "boolean", "description": "-F: the pattern is a literal."},
        "word": {"type": "boolean", "description": "-w: match whole words only."},
        "multiline": {"type": "boolean", "description": "-U: a match may span lines."},
        "pcre2": {
            "type": "boolean",
            "description": "-P: needed for look-arounds and back-references.",
        },
        "context_lines": {"type": "integer", "minimum": 0, "maximum": MAX_CONTEXT_LINES},
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


def _call_variant(name: ToolName, arguments: dict[str, Any]) -> dict[str, Any]:
    arguments = {k: v for k, v in arguments.items() if k != "$defs"}
    return {
        "type": "object",
        "properties": {"name": {"type": "string", "const": name.value}, "arguments": arguments},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


TOOL_CALL_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "ToolCall",
    "$defs": _RULE_DEFS,
    "anyOf": [
        _call_variant(ToolName.AST_GREP, AST_GREP_PATTERN_ARGUMENTS),
        _call_variant(ToolName.AST_GREP, AST_GREP_RULE_ARGUMENTS),
        _call_variant(ToolName.RIPGREP, RIPGREP_ARGUMENTS),
    ],
}

_STEP_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "call": {"anyOf": TOOL_CALL_SCHEMA["anyOf"]},
        "restrict_to_previous": {
            "type": "boolean",
            "description": "Search only the files the previous step found.",
        },
    },
    "required": ["call"],
    "additionalProperties": False,
}

COMPOSITE_PLAN_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Plan",
    "$defs": _RULE_DEFS,
    "type": "object",
    "properties": {
        "steps": {"type": "array", "items": _STEP_SCHEMA, "minItems": 1, "maxItems": MAX_PLAN_STEPS}
    },
    "required": ["steps"],
    "additionalProperties": False,
}

TOOL_DESCRIPTIONS: Final[dict[ToolName, str]] = {
    ToolName.AST_GREP: (
        "Structural code search with ast-grep: matches syntax trees, so it ignores comments and "
        "strings. Use it for code structure (calls, definitions, async functions, JSX elements)."
    ),
    ToolName.RIPGREP: (
        "Text search with ripgrep: regexes over lines. Use it for text (TODO markers, log lines, "
        "config keys, string literals); set pcre2 for look-arounds or back-references and "
        "file_types to restrict by language."
    ),
}


def arguments_schema(name: ToolName, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The schema one tool's arguments must satisfy (for ast-grep, the pattern or the rule form)."""
    if name is ToolName.RIPGREP:
        return RIPGREP_ARGUMENTS
    if arguments is not None and "rule" in arguments and "pattern" not in arguments:
        return AST_GREP_RULE_ARGUMENTS
    return AST_GREP_PATTERN_ARGUMENTS


def _json_path(err: jsonschema.ValidationError, prefix: str) -> str:
    parts = [prefix] if prefix else []
    for p in err.absolute_path:
        parts.append(f"[{p}]" if isinstance(p, int) else str(p))
    return ".".join(parts).replace(".[", "[")


def _describe(err: jsonschema.ValidationError) -> str:
    v = err.validator
    size = len(err.instance) if isinstance(err.instance, str | list) else 0
    schema = err.schema if isinstance(err.schema, Mapping) else {}
    if v == "additionalProperties" and isinstance(err.instance, Mapping):
        known = set(schema.get("properties", {}))
        unknown = sorted(str(k) for k in err.instance if k not in known)
        return f"unknown field(s): {', '.join(unknown)}"
    if v == "enum" and isinstance(err.validator_value, list):
        allowed = ", ".join(str(x) for x in err.validator_value)
        return f"{err.instance!r} is not one of: {allowed}"
    if v == "maxLength":
        return f"too long ({size} characters, at most {err.validator_value})"
    if v == "minLength":
        return "must not be empty"
    if v == "maxItems":
        return f"too many items ({size}, at most {err.validator_value})"
    if v == "required":
        return err.message.replace("'", "`")
    return err.message if len(err.message) < 300 else err.message[:300] + "..."


@functools.cache
def _validator(name: ToolName, rule_form: bool) -> jsonschema.protocols.Validator:
    """The validator of one argument form, built once (building one walks the whole schema)."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(arguments_schema(name, {"rule": {}} if rule_form else None))


_FLAGS: Final = frozenset(
    {"case_sensitive", "smart_case", "fixed_strings", "word", "multiline", "pcre2"}
)
_PATH_LISTS: Final = {"paths": MAX_PATHS, "globs": MAX_GLOBS}
_FILE_TYPE: Final = re.compile(r"[A-Za-z0-9_+-]{1,32}")
_LANGUAGES: Final = frozenset(AST_GREP_LANGUAGES)


def _plainly_valid(tool: ToolName, arguments: Mapping[str, Any]) -> bool:
    """True only for arguments the schema accepts, in the plain shapes calls take; False means
    "ask jsonschema" (which also names the bad field).

    jsonschema walks the schema for each call (~0.4 ms); verifying thousands of proposals, that was
    a tenth of each call's cost. Stricter than the schema where that is simpler (exact types, no
    float-valued integers, no newline before the end of a file type): such a call still validates,
    through jsonschema. `tests/tools/test_schemas.py` checks on random arguments that nothing this
    accepts is refused by the schema.
    """
    if type(arguments) is not dict:
        return False
    pattern = arguments.get("pattern")
    if type(pattern) is not str or not 1 <= len(pattern) <= MAX_PATTERN_CHARS:
        return False
    if tool is ToolName.AST_GREP:
        language = arguments.get("language")
        if type(language) is not str or language not in _LANGUAGES:
            return False
    for key, value in arguments.items():
        if key == "pattern":
            continue
        if tool is ToolName.AST_GREP:
            if key == "language":
                continue
            if key != "paths":
                return False
        if key in _PATH_LISTS:
            if type(value) is not list or len(value) > _PATH_LISTS[key]:
                return False
            if not all(type(v) is str and 1 <= len(v) <= MAX_PATH_CHARS for v in value):
                return False
        elif key in _FLAGS:
            if type(value) is not bool:
                return False
        elif key == "file_types":
            if type(value) is not list or len(value) > MAX_FILE_TYPES:
                return False
            if not all(type(v) is str and _FILE_TYPE.fullmatch(v) for v in value):
                return False
        elif key == "context_lines":
            if type(value) is not int or not 0 <= value <= MAX_CONTEXT_LINES:
                return False
        else:
            return False
    return True


def _check_arguments(tool: ToolName, arguments: Mapping[str, Any]) -> bool:
    """Raise ToolCallError for arguments the schema refuses; True when they were `_plainly_valid`."""
    if _plainly_valid(tool, arguments):
        return True
    rule_form = arguments_schema(tool, arguments) is AST_GREP_RULE_ARGUMENTS
    errors = _validator(tool, rule_form).iter_errors(arguments)
    first = min(errors, key=lambda e: (len(e.absolute_path), list(e.path)), default=None)
    if first is not None:
        raise ToolCallError(_describe(first), _json_path(first, "arguments") or "arguments")
    return False


def parse_tool_call(obj: Any) -> ToolCall:
    """Validate a decoded JSON value as one tool call; raise ToolCallError naming the bad field."""
    if not isinstance(obj, Mapping):
        raise ToolCallError(f"a tool call must be a JSON object, got {type(obj).__name__}", "call")
    unknown = sorted(set(obj) - {"name", "arguments"})
    if unknown:
        raise ToolCallError(f"unknown field(s): {', '.join(unknown)}", "call")
    name = obj.get("name")
    valid_names = [t.value for t in ToolName]
    if name not in valid_names:
        raise ToolCallError(f"{name!r} is not one of: {', '.join(valid_names)}", "name")
    tool = ToolName(name)
    arguments = obj.get("arguments")
    if not isinstance(arguments, Mapping):
        raise ToolCallError("must be a JSON object", "arguments")
    if tool is ToolName.AST_GREP and "rule" in arguments and "pattern" in arguments:
        raise ToolCallError("give either `pattern` or `rule`, not both", "arguments")
    plain = _check_arguments(tool, arguments)
    for key, value in arguments.items():
        # A NUL in a path is refused when the call runs, against its corpus (paths.resolve_in_corpus).
        _check_text(value, f"arguments.{key}", nul_allowed=key == "paths")
    if plain:  # strings, numbers and lists of strings: copying the lists copies it all
        return ToolCall(tool, {k: v[:] if type(v) is list else v for k, v in arguments.items()})
    return ToolCall(tool, copy.deepcopy(dict(arguments)))


def _check_text(value: Any, field: str, *, nul_allowed: bool = False) -> None:
    """Refuse strings that cannot reach a tool intact: a NUL byte, a lone surrogate."""
    if isinstance(value, str):
        if _NUL in value and not nul_allowed:
            raise ToolCallError(
                f"contains a NUL byte (at character {value.index(_NUL)}); no program can take "
                "one in an argument: remove it",
                field,
            )
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as err:
            raise ToolCallError(
                f"contains a lone surrogate ({value[err.start]!r} at character {err.start}), "
                "which is not valid Unicode text: write the character itself, or remove it",
                field,
            ) from None
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _check_text(item, f"{field}.{key}", nul_allowed=nul_allowed)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_text(item, f"{field}[{i}]", nul_allowed=nul_allowed)


def validate_tool_call(obj: Any) -> str | None:
    """None when `obj` is a valid call, else a readable error that names the field."""
    try:
        parse_tool_call(obj)
    except ToolCallError as err:
        return str(err)
    return None


def parse_plan(obj: Any) -> Plan:
    """Validate a composite plan (1 to 3 steps); errors name the step and field."""
    if not isinstance(obj, Mapping):
        raise ToolCallError(f"a plan must be a JSON object, got {type(obj).__name__}", "plan")
    steps = obj.get("steps")
    if set(obj) - {"steps"}:
        raise ToolCallError(f"unknown field(s): {', '.join(sorted(set(obj) - {'steps'}))}", "plan")
    if not isinstance(steps, list) or not 1 <= len(steps) <= MAX_PLAN_STEPS:
        raise ToolCallError(f"must be a list of 1 to {MAX_PLAN_STEPS} steps", "steps")
    parsed: list[PlanStep] = []
    for i, step in enumerate(steps):
        where = f"steps[{i}]"
        if not isinstance(step, Mapping) or "call" not in step:
            raise ToolCallError("must be an object with a `call`", where)
        extra = sorted(set(step) - {"call", "restrict_to_previous"})
        if extra:
            raise ToolCallError(f"unknown field(s): {', '.join(extra)}", where)
        restrict = step.get("restrict_to_previous", False)
        if not isinstance(restrict, bool):
            raise ToolCallError("must be true or false", f"{where}.restrict_to_previous")
        if restrict and i == 0:
            raise ToolCallError(
                "the first step has no previous step", f"{where}.restrict_to_previous"
            )
        try:
            call = parse_tool_call(step["call"])
        except ToolCallError as err:
            raise ToolCallError(err.detail, f"{where}.call.{err.field}") from None
        parsed.append(PlanStep(call, restrict))
    return Plan(tuple(parsed))


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    return {
        "steps": [
            {"call": s.call.to_dict(), "restrict_to_previous": s.restrict_to_previous}
            for s in plan.steps
        ]
    }
