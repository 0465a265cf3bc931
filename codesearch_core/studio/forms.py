"""Schema-driven forms for a tool call: which widgets to draw, and the round trip call <-> widget values.

The fields come from `schemas.arguments_schema`, so a new argument in the schema shows up in the app
without touching it. Validation messages come from `schemas.parse_tool_call`, so the form says the
same thing the CLI and the importers say, but next to the field it is about.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from codesearch_core.errors import ToolCallError
from codesearch_core.models import ToolCall, ToolName
from codesearch_core.tools import arguments_schema, parse_tool_call


class FieldKind(StrEnum):
    TEXT = "text"
    CHOICE = "choice"
    BOOL = "bool"
    INT = "int"
    LIST = "list"  # a list of strings, edited as one item per line
    JSON = "json"  # a nested object (an ast-grep rule), edited as JSON text


class AstGrepForm(StrEnum):
    """ast-grep takes either a one-line pattern or a structured rule; the form shows one of them."""

    PATTERN = "pattern"
    RULE = "rule"


@dataclass(frozen=True, slots=True)
class FormField:
    name: str
    kind: FieldKind
    label: str
    help: str
    required: bool
    default: Any
    options: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None


@dataclass(frozen=True, slots=True)
class FormResult:
    """What the form's values make: the call dict, a parsed call when valid, and per-field errors.

    `errors` maps a field name to its message; the key "" holds an error about the call as a whole.
    """

    call: dict[str, Any]
    parsed: ToolCall | None
    errors: Mapping[str, str] = field(default_factory=dict)


NOT_A_CALL: Final = "a tool call is a JSON object with `name` and `arguments`"

#: The schema leaves these out (a missing flag means rg's default); the form shows the effective value.
_BOOL_DEFAULTS: Final[Mapping[str, bool]] = {"case_sensitive": True}

#: Values that make a required field valid, used only to look past it for errors in other fields.
_PLACEHOLDERS: Final[Mapping[str, Any]] = {
    "pattern": "x",
    "language": "python",
    "rule": {"pattern": "x"},
}


#: Names that are not words: written as their projects write them, not capitalized ("Pcre2").
_LABELS: Final[Mapping[str, str]] = {"pcre2": "PCRE2"}


def _label(name: str) -> str:
    return _LABELS.get(name) or name.replace("_", " ").capitalize()


def form_fields(
    tool: ToolName, ast_grep_form: AstGrepForm = AstGrepForm.PATTERN
) -> tuple[FormField, ...]:
    """The fields of one tool's arguments, in schema order."""
    shape: dict[str, Any] | None = {"rule": {}} if ast_grep_form is AstGrepForm.RULE else None
    schema = arguments_schema(tool, shape)
    required = set(schema.get("required", ()))
    fields: list[FormField] = []
    for name, prop in schema["properties"].items():
        kind, default, options = _kind_of(name, prop)
        fields.append(
            FormField(
                name=name,
                kind=kind,
                label=_label(name),
                help=str(prop.get("description", "")),
                required=name in required,
                default=default,
                options=options,
                minimum=prop.get("minimum"),
                maximum=prop.get("maximum"),
            )
        )
    return tuple(fields)


def _kind_of(name: str, prop: Mapping[str, Any]) -> tuple[FieldKind, Any, tuple[str, ...]]:
    if "enum" in prop:
        options = tuple(str(o) for o in prop["enum"])
        return FieldKind.CHOICE, options[0], options
    match prop.get("type"):
        case "boolean":
            return FieldKind.BOOL, _BOOL_DEFAULTS.get(name, False), ()
        case "integer":
            return FieldKind.INT, None, ()
        case "array":
            return FieldKind.LIST, "", ()
        case "string":
            return FieldKind.TEXT, "", ()
    # A `$ref` to a rule (or any other object) is edited as JSON.
    return FieldKind.JSON, "", ()


def ast_grep_form_of(call: Mapping[str, Any] | None) -> AstGrepForm:
    arguments = (call or {}).get("arguments")
    if isinstance(arguments, Mapping) and "rule" in arguments and "pattern" not in arguments:
        return AstGrepForm.RULE
    return AstGrepForm.PATTERN


def form_values(
    call: Mapping[str, Any] | None, tool: ToolName, ast_grep_form: AstGrepForm = AstGrepForm.PATTERN
) -> dict[str, Any]:
    """The widget value of every field for `call` (defaults where the call is silent or another tool)."""
    arguments: Mapping[str, Any] = {}
    if call is not None and call.get("name") == tool.value:
        raw = call.get("arguments")
        arguments = raw if isinstance(raw, Mapping) else {}
    values: dict[str, Any] = {}
    for f in form_fields(tool, ast_grep_form):
        value = arguments.get(f.name)
        if value is None:
            values[f.name] = f.default
        elif f.kind is FieldKind.LIST:
            values[f.name] = (
                "\n".join(str(v) for v in value) if isinstance(value, list) else str(value)
            )
        elif f.kind is FieldKind.JSON:
            values[f.name] = json.dumps(value, indent=2, ensure_ascii=False)
        else:
            values[f.name] = value
    return values


def build_call(
    tool: ToolName, values: Mapping[str, Any], ast_grep_form: AstGrepForm = AstGrepForm.PATTERN
) -> FormResult:
    """Turn widget values into a call dict, parse it, and say what is wrong field by field.

    Empty optional fields and flags left at their default are left out, so an untouched form gives
    the shortest call (the one a model should learn to write).
    """
    arguments: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for f in form_fields(tool, ast_grep_form):
        value = values.get(f.name, f.default)
        if f.kind is FieldKind.BOOL:
            if bool(value) != f.default:
                arguments[f.name] = bool(value)
        elif f.kind is FieldKind.INT:
            if value is not None and value != "":
                arguments[f.name] = int(value)
        elif f.kind is FieldKind.LIST:
            items = [line.strip() for line in str(value or "").splitlines() if line.strip()]
            if items:
                arguments[f.name] = items
        elif f.kind is FieldKind.JSON:
            text = str(value or "").strip()
            if text:
                try:
                    arguments[f.name] = json.loads(text)
                except json.JSONDecodeError as err:
                    errors[f.name] = (
                        f"not valid JSON: {err.msg} (line {err.lineno}, column {err.colno})"
                    )
        elif value is not None and (value != "" or f.required):
            arguments[f.name] = value
    call = {"name": tool.value, "arguments": arguments}
    if errors:
        # A field that is not even JSON stands in as a placeholder, so the schema neither reports it
        # as missing nor (for ast-grep) switches to the pattern form; other fields still get checked.
        stand_in = {**arguments, **{k: _PLACEHOLDERS.get(k, {}) for k in errors}}
        others = field_errors({"name": tool.value, "arguments": stand_in})
        return FormResult(call, None, {**others, **errors})
    try:
        return FormResult(call, parse_tool_call(call))
    except ToolCallError:
        return FormResult(call, None, field_errors(call))


def _field_of(err: ToolCallError, arguments: Mapping[str, Any], required: set[str]) -> str:
    """The top-level argument an error is about ("" when it is about the call as a whole)."""
    path = err.field
    if path.startswith("arguments."):
        return path.removeprefix("arguments.").split(".")[0].split("[")[0]
    if path == "arguments":
        for name in sorted(required):
            if name not in arguments and f"`{name}`" in err.detail:
                return name
    return ""


def field_errors(call: Mapping[str, Any]) -> dict[str, str]:
    """Every argument's validation message, not only the first one the schema reports.

    Each round reports one field; the field is then set aside (dropped, or a placeholder when it is
    required) so the next round can report the next one.
    """
    name = call.get("name")
    raw_arguments = call.get("arguments")
    if name not in {t.value for t in ToolName} or not isinstance(raw_arguments, Mapping):
        error = ToolCallError("a call needs a known `name` and an `arguments` object", "call")
        try:
            parse_tool_call(call)
        except ToolCallError as err:
            error = err
        return {"": str(error)}
    tool = ToolName(name)
    arguments = dict(raw_arguments)
    required = set(arguments_schema(tool, arguments).get("required", ()))
    errors: dict[str, str] = {}
    for _ in range(len(arguments) + len(required) + 1):
        try:
            parse_tool_call({"name": tool.value, "arguments": arguments})
            break
        except ToolCallError as err:
            where = _field_of(err, arguments, required)
            if not where or where in errors:
                errors.setdefault("", str(err))
                break
            errors[where] = err.detail
            if where in required:
                arguments[where] = _PLACEHOLDERS.get(where, "x")
            else:
                arguments.pop(where, None)
    return errors


def call_from_json_text(text: str) -> FormResult:
    """The raw-JSON editor's text as a call: a decode error or a non-object is the `""` error,
    schema problems are reported per field; blank text is an empty result with a hint."""
    try:
        value = json.loads(text) if text.strip() else None
    except json.JSONDecodeError as err:
        message = f"not valid JSON: {err.msg} (line {err.lineno}, column {err.colno})"
        return FormResult({}, None, {"": message})
    except RecursionError:
        return FormResult({}, None, {"": "not valid JSON: nested too deeply"})
    if not isinstance(value, dict):
        return FormResult({}, None, {"": NOT_A_CALL})
    errors = field_errors(value)
    return FormResult(value, None if errors else parse_tool_call(value), errors)
