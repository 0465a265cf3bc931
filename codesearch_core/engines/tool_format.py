"""Each model's own tool-calling syntax: how a call is written, constrained and read back.

A tool-calling model was trained to see the tools through its chat template (`tools=`) and to
answer in one syntax: Qwen2.5 / Qwen3 / Hermes write `<tool_call>\\n{json}\\n</tool_call>`,
Llama 3.1 a bare `{"name": ..., "parameters": {...}}`, xLAM-2 a JSON list of calls, Mistral
`[TOOL_CALLS][...]`. Asking such a model in another format wastes what it learned, and the
exports (OpenAI `tools` + `tool_calls`) would come from a different format than the one the data
was generated in.

A `ToolFormat` says, for one syntax:
- the JSON Schema of what sits between its markers (our tool-call schema, with the syntax's
  argument key and list wrapping), and the structured-output constraint that forces exactly
  `begin + that JSON + end` (`structured_outputs`);
- how to read an answer back (`parse`), without trusting that the grammar held: markers are
  looked for, the JSON is decoded with the same control-character repair as any model output,
  and the syntax's own shape (argument key, list) is turned into our `{"name", "arguments"}`.

`json` is the fallback for models without a tool template: the home-made prompt lists the tools
in the system message and the answer is one bare JSON object. A model whose chat template drops
`tools` is otherwise given the project's own tool template (`tool_template.py`): Hermes markers
around compact JSON, the tools described in its system message.

`answer_format` says which syntax an answer written elsewhere is in (its declared format, else
the markers it holds), so `--engine import` reads a file exactly as the engine that wrote it would.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from codesearch_core.engines.repair import ParsedOutput, parse_model_output
from codesearch_core.errors import EngineError
from codesearch_core.tools import TOOL_CALL_SCHEMA

ToolFormatName = Literal["hermes", "llama3_json", "xlam", "mistral", "json"]


@dataclass(frozen=True, slots=True)
class ToolFormat:
    """One tool-call syntax. `vllm_parser` is the `--tool-call-parser` that reads it on a server."""

    name: ToolFormatName
    label: str
    begin: str
    end: str
    arguments_key: str
    as_list: bool
    vllm_parser: str | None
    #: The tools reach the model through its chat template (`tools=`), not our system prompt.
    template_tools: bool

    def call_schema(self) -> dict[str, Any]:
        """The JSON Schema of the text between `begin` and `end`."""
        schema = copy.deepcopy(TOOL_CALL_SCHEMA)
        if self.arguments_key != "arguments":
            for branch in schema["anyOf"]:
                props = branch["properties"]
                props[self.arguments_key] = props.pop("arguments")
                branch["required"] = [
                    self.arguments_key if key == "arguments" else key for key in branch["required"]
                ]
        if not self.as_list:
            return schema
        defs = schema.pop("$defs")
        schema.pop("$schema", None)
        title = schema.pop("title", "ToolCall")
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": f"{title}List",
            "$defs": defs,
            "type": "array",
            "items": schema,
            "minItems": 1,
            "maxItems": 1,
        }

    def structured_outputs(self, *, compact: bool) -> dict[str, Any]:
        """Keyword arguments for vLLM's `StructuredOutputsParams` (also the server's field).

        A syntax with markers gets a structural tag: the markers verbatim, and between them JSON
        of `call_schema`. Compact JSON there needs a grammar: vLLM's engine-wide
        `disable_any_whitespace` does not reach a structural tag's `json_schema` content, so the
        content is xgrammar's own EBNF for the schema built without whitespace. Markerless
        syntaxes are plain JSON constraints, which the engine-wide flag does make compact.
        """
        schema = self.call_schema()
        if not self.begin and not self.end:
            return {"json": schema}
        content: dict[str, Any] = (
            {"type": "grammar", "grammar": compact_ebnf(schema)}
            if compact
            else {"type": "json_schema", "json_schema": schema}
        )
        tag = {
            "type": "structural_tag",
            "format": {"type": "tag", "begin": self.begin, "content": content, "end": self.end},
        }
        return {"structural_tag": json.dumps(tag)}

    def parse(self, raw_text: str, finish_reason: str | None = None) -> ParsedOutput:
        """The call in `raw_text` as `{"name", "arguments"}` (or why there is none). Never raises."""
        if finish_reason == "length" or self.name == "json" or not raw_text.strip():
            return parse_model_output(raw_text, finish_reason)
        repairs: list[str] = []
        text = raw_text
        if self.begin:
            marker = self.begin.strip()
            at = text.find(marker)
            if at < 0:
                parsed = parse_model_output(raw_text, finish_reason)
                if parsed.error:
                    return ParsedOutput(
                        None, f"no {marker} in the output: the model did not call a tool", ()
                    )
                # A bare JSON call where the model should have used its markers: keep it, say so.
                return ParsedOutput(
                    self._unwrap(parsed.value, repairs),
                    "",
                    (*parsed.repairs, f"{marker} missing", *repairs),
                    self._calls_in(parsed),
                )
            if text[:at].strip():
                repairs.append(f"text before {marker} dropped")
            text = text[at + len(marker) :]
        more_blocks = 0
        if self.end:
            marker = self.end.strip()
            at = text.find(marker)
            if at >= 0:
                after = text[at + len(marker) :]
                if after.strip():
                    repairs.append(f"text after {marker} dropped")
                # Each begin marker after the first block opens another call (Hermes writes
                # parallel calls as blocks); one inside the first call's arguments is text.
                more_blocks = after.count(self.begin.strip()) if self.begin else 0
                text = text[:at]
            else:
                repairs.append(f"{marker} missing")
        parsed = parse_model_output(text.strip(), finish_reason)
        if parsed.error:
            return ParsedOutput(None, parsed.error, (*repairs, *parsed.repairs))
        calls = self._calls_in(parsed) + more_blocks
        value = self._unwrap(parsed.value, repairs)
        return ParsedOutput(value, "", (*repairs, *parsed.repairs), calls)

    def _calls_in(self, parsed: ParsedOutput) -> int:
        """The calls one decoded block holds: a list's items in a list syntax (xLAM, Mistral)."""
        if self.as_list and isinstance(parsed.value, list):
            return max(len(parsed.value), 1)
        return parsed.calls

    def _unwrap(self, value: Any, repairs: list[str]) -> Any:
        """The syntax's own shape (a list, another argument key) as our `{"name", "arguments"}`."""
        if self.as_list and isinstance(value, list):
            if len(value) > 1:
                repairs.append(f"first of {len(value)} calls taken")
            value = value[0] if value else value
        if (
            self.arguments_key != "arguments"
            and isinstance(value, dict)
            and self.arguments_key in value
            and "arguments" not in value
        ):
            value = {
                ("arguments" if key == self.arguments_key else key): item
                for key, item in value.items()
            }
        return value

    def render_call(self, name: str, arguments: dict[str, Any], *, compact: bool = False) -> str:
        """A call written in this syntax, as the model would. `compact`: no whitespace between
        JSON tokens, what the engines' grammar lets a model write (`--compact-json`, the
        default), and so what the project's tool template trains it to write."""
        body: Any = {"name": name, self.arguments_key: arguments}
        if self.as_list:
            body = [body]
        separators = (",", ":") if compact else (", ", ": ")
        return self.begin + json.dumps(body, ensure_ascii=False, separators=separators) + self.end


TOOL_FORMATS: Final[dict[str, ToolFormat]] = {
    f.name: f
    for f in (
        ToolFormat(
            name="hermes",
            label="Hermes <tool_call> JSON (Qwen2.5, Qwen3, Hermes)",
            begin="<tool_call>\n",
            end="\n</tool_call>",
            arguments_key="arguments",
            as_list=False,
            vllm_parser="hermes",
            template_tools=True,
        ),
        ToolFormat(
            name="llama3_json",
            label='Llama 3.1 JSON ({"name", "parameters"})',
            begin="",
            end="",
            arguments_key="parameters",
            as_list=False,
            vllm_parser="llama3_json",
            template_tools=True,
        ),
        ToolFormat(
            name="xlam",
            label="xLAM JSON list of calls",
            begin="",
            end="",
            arguments_key="arguments",
            as_list=True,
            vllm_parser="xlam",
            template_tools=True,
        ),
        ToolFormat(
            name="mistral",
            label="Mistral [TOOL_CALLS] list",
            begin="[TOOL_CALLS]",
            end="",
            arguments_key="arguments",
            as_list=True,
            vllm_parser="mistral",
            template_tools=True,
        ),
        ToolFormat(
            name="json",
            label="bare JSON call, tools described in the system prompt (no tool template)",
            begin="",
            end="",
            arguments_key="arguments",
            as_list=False,
            vllm_parser=None,
            template_tools=False,
        ),
    )
}

DEFAULT_TOOL_FORMAT: Final = "hermes"


def get_tool_format(name: str) -> ToolFormat:
    try:
        return TOOL_FORMATS[name]
    except KeyError:
        known = ", ".join(TOOL_FORMATS)
        raise EngineError(f"no tool format {name!r}; known formats: {known}") from None


def answer_format(raw_text: str, declared: str | None = None) -> ToolFormat:
    """The syntax an answer was written in: the first format whose begin marker the text holds
    (`<tool_call>`, `[TOOL_CALLS]`), else `declared` when it names a format (a proposals file
    records the engine's `tool_format`), else a JSON list of calls (xLAM) or one bare JSON call.

    Markers win over the declared format: a model asked for bare JSON that wrote its own
    `<tool_call>` block still made that call. Each syntax's reader is tolerant the way the
    engines' is (a missing end marker, text around the call, a fenced block, a bare call where
    markers were due), so a file of answers scores as the same answers would have live.
    """
    # A marker counts before the first JSON object only: one inside a bare call's strings (a
    # search for `<tool_call>` itself) is text.
    brace = raw_text.find("{")
    for tool_format in TOOL_FORMATS.values():
        at = raw_text.find(tool_format.begin.strip()) if tool_format.begin else -1
        if at >= 0 and (brace < 0 or at < brace):
            return tool_format
    if declared in TOOL_FORMATS:
        return TOOL_FORMATS[declared]
    if raw_text.lstrip().startswith("["):
        return TOOL_FORMATS["xlam"]
    return TOOL_FORMATS["json"]


GRAMMARS_FILE: Final = Path(__file__).with_name("compact_grammars.json")


def schema_digest(schema: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(schema, sort_keys=True).encode("utf-8")).hexdigest()


def build_compact_ebnf(schema: dict[str, Any]) -> str:
    """xgrammar's EBNF for `schema` with no whitespace between JSON tokens (needs xgrammar)."""
    import xgrammar

    grammar = xgrammar.Grammar.from_json_schema(
        json.dumps(schema), any_whitespace=False, separators=(",", ":")
    )
    return str(grammar)


def compact_ebnf(schema: dict[str, Any]) -> str:
    """The compact EBNF for `schema`, from the shipped file (built by xgrammar).

    Shipped rather than built on the fly because xgrammar comes with torch, which the studio does
    not need when it talks to a server; the file records the digest of the schema it was built
    from, so a schema change cannot use a stale grammar (and a test rebuilds and compares it).
    Regenerate with `python -m codesearch_core.engines.tool_format` in an environment with vLLM.
    """
    digest = schema_digest(schema)
    try:
        shipped = json.loads(GRAMMARS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        shipped = {}
    entry = shipped.get(digest)
    if isinstance(entry, str):
        return entry
    try:
        return build_compact_ebnf(schema)
    except ImportError as err:
        raise EngineError(
            f"no compact grammar for this tool-call schema in {GRAMMARS_FILE.name} and no "
            "xgrammar to build one: regenerate it with `python -m "
            "codesearch_core.engines.tool_format` where vLLM is installed, or turn compact "
            f"JSON off ({err})"
        ) from err


def write_compact_grammars(path: Path = GRAMMARS_FILE) -> dict[str, str]:
    """Build the compact grammar of every marker format's schema and write them to `path`."""
    grammars: dict[str, str] = {}
    for tool_format in TOOL_FORMATS.values():
        if tool_format.begin or tool_format.end:
            schema = tool_format.call_schema()
            grammars[schema_digest(schema)] = build_compact_ebnf(schema)
    path.write_text(json.dumps(grammars, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return grammars


if __name__ == "__main__":
    written = write_compact_grammars()
    print(f"{len(written)} grammars written to {GRAMMARS_FILE}")
