"""What an agent may do in an episode: the four tools as a model is shown them, and the check of
each call it makes.

The two search tools are the studio's own (`tools.openai_tools`, validated by
`tools.parse_tool_call`), unchanged, so a model trained in the gym calls them as the single-call
data does. `read_file` and `submit` are the gym's. A call is checked here and never raises: what is
wrong comes back as an `ActionError` with a kind and a message the model is shown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from codesearch_core.errors import ToolCallError
from codesearch_core.gym.settings import READ_MAX_LINES, SUBMIT_MAX_LOCATIONS
from codesearch_core.models import Span, ToolCall, ToolName
from codesearch_core.tools import openai_tools, parse_tool_call

READ_FILE: Final = "read_file"
SUBMIT: Final = "submit"
SEARCH_TOOLS: Final = frozenset(t.value for t in ToolName)
TOOL_NAMES: Final = (*sorted(SEARCH_TOOLS), READ_FILE, SUBMIT)
#: Longest path a call may name (a corpus path is far shorter; this bounds what is echoed back).
_MAX_PATH: Final = 4096

_LOCATION: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File path relative to the corpus root."},
        "start_line": {"type": "integer", "minimum": 1, "description": "First line, 1-based."},
        "end_line": {"type": "integer", "minimum": 1, "description": "Last line, inclusive."},
    },
    "required": ["path", "start_line", "end_line"],
}


def gym_tools() -> list[dict[str, Any]]:
    """The episode's tools as OpenAI function tools: the two searches, `read_file` and `submit`."""
    return [
        *openai_tools(),
        {
            "type": "function",
            "function": {
                "name": READ_FILE,
                "description": (
                    f"Read lines of one file of the corpus (at most {READ_MAX_LINES} lines a call)."
                ),
                "parameters": {
                    "type": "object",
                    "properties": {
                        "path": {
                            "type": "string",
                            "description": "File path relative to the corpus root.",
                        },
                        "start_line": {
                            "type": "integer",
                            "minimum": 1,
                            "description": "First line to show, 1-based. Default 1.",
                            "default": 1,
                        },
                        "end_line": {
                            "type": "integer",
                            "minimum": 1,
                            "description": f"Last line to show. Default start_line + "
                            f"{READ_MAX_LINES - 1}.",
                        },
                    },
                    "required": ["path"],
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": SUBMIT,
                "description": (
                    "End the search: the locations (file and line range) of every piece of code "
                    "the task asks for. Graded against the expected locations; call it once."
                ),
                "parameters": {
                    "type": "object",
                    "properties": {
                        "locations": {
                            "type": "array",
                            "items": _LOCATION,
                            "description": "Every location found; an empty list if none.",
                        }
                    },
                    "required": ["locations"],
                },
            },
        },
    ]


class Refusal:
    """Why the environment refused a call (the `kind` of an error observation)."""

    MALFORMED = "malformed_call"  # not an object with a name
    MALFORMED_JSON = "malformed_json"  # arguments given as text that is not JSON
    UNKNOWN_TOOL = "unknown_tool"
    INVALID_ARGUMENTS = "invalid_arguments"
    PATH_OUTSIDE_CORPUS = "path_outside_corpus"
    NOT_A_FILE = "not_a_file"
    BINARY_FILE = "binary_file"
    TOO_MANY_CALLS = "too_many_calls"  # past the turn's parallel-call limit
    TURN_LIMIT = "turn_limit"
    EPISODE_OVER = "episode_over"  # a call after submit


@dataclass(frozen=True, slots=True)
class ActionError:
    kind: str
    message: str


@dataclass(frozen=True, slots=True)
class ReadRequest:
    path: str
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class Submission:
    locations: tuple[Span, ...]


Action = ToolCall | ReadRequest | Submission


@dataclass(frozen=True, slots=True)
class RawCall:
    """A call as the agent wrote it: its name and its arguments (an object, or JSON text as OpenAI's
    `tool_calls` carry them), kept verbatim for the trajectory."""

    name: Any
    arguments: Any
    call_id: str = ""

    @staticmethod
    def of(obj: Any) -> RawCall:
        """From `{"name", "arguments"}`, an OpenAI tool call (`{"id", "function": {...}}`) or
        anything else (which then fails `check`)."""
        if isinstance(obj, RawCall):
            return obj
        if isinstance(obj, Mapping):
            fn = obj.get("function")
            if isinstance(fn, Mapping):
                return RawCall(fn.get("name"), fn.get("arguments"), str(obj.get("id") or ""))
            return RawCall(obj.get("name"), obj.get("arguments"), str(obj.get("id") or ""))
        return RawCall(None, obj)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments}


def _int(value: Any, field: str, default: int | None = None) -> int:
    if value is None and default is not None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolCallError(f"{field} must be an integer, got {json.dumps(value)[:40]}", field)
    if value < 1:
        raise ToolCallError(f"{field} must be >= 1, got {value}", field)
    return value


def _path(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ToolCallError(f"{field} must be a non-empty path relative to the corpus root", field)
    if len(value) > _MAX_PATH or "\x00" in value:
        raise ToolCallError(f"{field} is not a usable path", field)
    return value


def _only(arguments: Mapping[str, Any], allowed: frozenset[str], tool: str) -> None:
    extra = sorted(set(arguments) - allowed)
    if extra:
        raise ToolCallError(f"{tool} takes no argument {', '.join(extra)}", extra[0])


def _read(arguments: Mapping[str, Any]) -> ReadRequest:
    _only(arguments, frozenset({"path", "start_line", "end_line"}), READ_FILE)
    path = _path(arguments.get("path"), "path")
    start = _int(arguments.get("start_line"), "start_line", 1)
    end = _int(arguments.get("end_line"), "end_line", start + READ_MAX_LINES - 1)
    if end < start:
        raise ToolCallError(f"end_line {end} is before start_line {start}", "end_line")
    return ReadRequest(path, start, end)


def _submission(arguments: Mapping[str, Any]) -> Submission:
    _only(arguments, frozenset({"locations"}), SUBMIT)
    locations = arguments.get("locations")
    if not isinstance(locations, list):
        raise ToolCallError("locations must be a list of {path, start_line, end_line}", "locations")
    if len(locations) > SUBMIT_MAX_LOCATIONS:
        raise ToolCallError(
            f"{len(locations)} locations: submit at most {SUBMIT_MAX_LOCATIONS}", "locations"
        )
    spans = []
    for i, loc in enumerate(locations):
        where = f"locations[{i}]"
        if not isinstance(loc, Mapping):
            raise ToolCallError(f"{where} must be an object {{path, start_line, end_line}}", where)
        _only(loc, frozenset({"path", "start_line", "end_line"}), f"{where}:")
        start = _int(loc.get("start_line"), f"{where}.start_line")
        end = _int(loc.get("end_line"), f"{where}.end_line")
        if end < start:
            raise ToolCallError(f"{where}: end_line {end} is before start_line {start}", where)
        spans.append(Span(_path(loc.get("path"), f"{where}.path"), start, end))
    return Submission(tuple(spans))


def check(raw: RawCall) -> Action | ActionError:
    """The action `raw` asks for, or why it is refused (never raises)."""
    if not isinstance(raw.name, str) or not raw.name:
        return ActionError(Refusal.MALFORMED, "a call needs a tool name and its arguments")
    if raw.name not in TOOL_NAMES:
        return ActionError(
            Refusal.UNKNOWN_TOOL,
            f"no tool named {raw.name[:80]!r}; the tools are {', '.join(TOOL_NAMES)}",
        )
    arguments = raw.arguments
    if arguments is None:
        arguments = {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError) as err:
            return ActionError(Refusal.MALFORMED_JSON, f"the arguments are not JSON: {err}")
    if not isinstance(arguments, Mapping):
        return ActionError(Refusal.INVALID_ARGUMENTS, "the arguments must be a JSON object")
    try:
        if raw.name == READ_FILE:
            return _read(arguments)
        if raw.name == SUBMIT:
            return _submission(arguments)
        return parse_tool_call({"name": raw.name, "arguments": dict(arguments)})
    except ToolCallError as err:
        return ActionError(Refusal.INVALID_ARGUMENTS, str(err))
    except (RecursionError, ValueError, TypeError) as err:  # absurdly deep or odd JSON values
        return ActionError(Refusal.INVALID_ARGUMENTS, f"the arguments cannot be read: {err}")
