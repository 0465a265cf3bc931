"""The tools as a model is shown them: OpenAI function tools and xLAM's flat tool list.

Derived from the argument schemas (`schemas.py`), so a new argument shows up in every prompt and
export. The nested ast-grep `rule` is described, not spelled out: its unrolled schema is
kilobytes, repeated in every prompt and export line, and calls are validated against our own
schema anyway. The engines pass `OPENAI_TOOLS` to the model's chat template (`tools=`), and the
exports write the same list, so the data is exported in the format it was generated in.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from codesearch_core.models import ToolName
from codesearch_core.tools.schemas import (
    AST_GREP_LANGUAGES,
    AST_GREP_PATTERN_ARGUMENTS,
    AST_GREP_RULE_ARGUMENTS,
    RIPGREP_ARGUMENTS,
    TOOL_DESCRIPTIONS,
)

#: Descriptions for arguments whose schema has none.
_DESCRIPTIONS: Final[dict[str, str]] = {
    "language": "ast-grep language name: " + ", ".join(AST_GREP_LANGUAGES) + ".",
    "rule": (
        "An ast-grep rule object instead of a pattern: keys kind, pattern, regex, has, inside, "
        "not, all, any, stopBy; has/inside/not hold a nested rule, all/any a list of rules."
    ),
    "context_lines": "Lines of context to show around each match (0-10). Default 0.",
}
_DEFAULTS: Final[dict[str, Any]] = {
    "case_sensitive": True,
    "smart_case": False,
    "fixed_strings": False,
    "word": False,
    "multiline": False,
    "pcre2": False,
    "context_lines": 0,
}
_XLAM_TYPES: Final = {"string": "str", "boolean": "bool", "integer": "int", "object": "dict"}


def _arguments(tool: ToolName) -> tuple[dict[str, Any], list[str]]:
    """(properties, required) of a tool's arguments; ast-grep's two forms merged into one."""
    if tool is ToolName.RIPGREP:
        return dict(RIPGREP_ARGUMENTS["properties"]), ["pattern"]
    props = dict(AST_GREP_PATTERN_ARGUMENTS["properties"])
    props["rule"] = AST_GREP_RULE_ARGUMENTS["properties"]["rule"]
    return props, ["language"]


def _description(tool: ToolName, name: str, spec: Mapping[str, Any]) -> str:
    text = str(spec.get("description") or _DESCRIPTIONS.get(name, name.replace("_", " ")))
    if tool is ToolName.AST_GREP and name == "pattern":
        text += " Give either pattern or rule."
    return text


def _json_type(spec: Mapping[str, Any]) -> str:
    return "object" if "$ref" in spec else str(spec.get("type", "object"))


def openai_tools() -> list[dict[str, Any]]:
    """OpenAI function tools (`{"type": "function", "function": {...}}`) with JSON Schema params."""
    tools = []
    for tool in ToolName:
        props, required = _arguments(tool)
        params: dict[str, Any] = {}
        for name, spec in props.items():
            param: dict[str, Any] = {
                "type": _json_type(spec),
                "description": _description(tool, name, spec),
            }
            if "enum" in spec:
                param["enum"] = list(spec["enum"])
            if spec.get("type") == "array":
                param["items"] = {"type": "string"}
            for bound in ("minimum", "maximum"):
                if bound in spec:
                    param[bound] = spec[bound]
            if name in _DEFAULTS:
                param["default"] = _DEFAULTS[name]
            params[name] = param
        tools.append(
            {
                "type": "function",
                "function": {
                    "name": tool.value,
                    "description": TOOL_DESCRIPTIONS[tool],
                    "parameters": {"type": "object", "properties": params, "required": required},
                },
            }
        )
    return tools


def xlam_tools() -> list[dict[str, Any]]:
    """Tool definitions in xLAM's flat style."""
    tools = []
    for tool in ToolName:
        props, required = _arguments(tool)
        params: dict[str, Any] = {}
        for name, spec in props.items():
            kind = _json_type(spec)
            description = _description(tool, name, spec)
            if name not in required and name not in _DEFAULTS and name != "pattern":
                description += " Optional."
            param: dict[str, Any] = {
                "type": "List[str]" if kind == "array" else _XLAM_TYPES[kind],
                "description": description,
            }
            if name in _DEFAULTS:
                param["default"] = _DEFAULTS[name]
            params[name] = param
        tools.append(
            {"name": tool.value, "description": TOOL_DESCRIPTIONS[tool], "parameters": params}
        )
    return tools


XLAM_TOOLS_JSON: Final = json.dumps(xlam_tools(), ensure_ascii=False)
OPENAI_TOOLS: Final = openai_tools()
