"""Each model's tool-call syntax: the schema between its markers, the constraint, reading it back.

The grammars themselves are checked against xgrammar in the vLLM venv
(`test_engines_vllm.py`); here: shapes, the shipped compact grammars' freshness, and the reader on
what models really write (markers, prose around them, lists, another argument key, junk).
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from codesearch_core.engines.base import proposal_from_text, read_call
from codesearch_core.engines.repair import LENGTH_ERROR
from codesearch_core.engines.tool_format import (
    GRAMMARS_FILE,
    TOOL_FORMATS,
    compact_ebnf,
    get_tool_format,
    schema_digest,
)
from codesearch_core.errors import EngineError
from codesearch_core.tools import TOOL_CALL_SCHEMA

CALL = {"name": "ripgrep_search", "arguments": {"pattern": "TODO", "file_types": ["py"]}}
HERMES = get_tool_format("hermes")


@pytest.mark.parametrize("name", sorted(TOOL_FORMATS))
def test_a_call_written_in_each_format_reads_back_to_the_same_call(name: str) -> None:
    tool_format = get_tool_format(name)
    text = tool_format.render_call(CALL["name"], CALL["arguments"])
    proposal = proposal_from_text("bp", text, engine="e", model="m", tool_format=tool_format)
    assert proposal.valid and proposal.call is not None, proposal.error
    assert proposal.call.to_dict() == CALL and proposal.repairs == ()


@pytest.mark.parametrize("name", sorted(TOOL_FORMATS))
def test_the_schema_between_the_markers_takes_the_formats_own_shape(name: str) -> None:
    tool_format = get_tool_format(name)
    body = tool_format.render_call(CALL["name"], CALL["arguments"])
    body = body.removeprefix(tool_format.begin).removesuffix(tool_format.end)
    jsonschema.validate(json.loads(body), tool_format.call_schema())
    if tool_format.arguments_key != "arguments" or tool_format.as_list:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(CALL, tool_format.call_schema())


def test_llama_writes_parameters_and_xlam_a_list() -> None:
    assert get_tool_format("llama3_json").render_call("x", {}) == '{"name": "x", "parameters": {}}'
    assert get_tool_format("xlam").render_call("x", {}) == '[{"name": "x", "arguments": {}}]'
    assert HERMES.render_call("x", {}).startswith("<tool_call>\n")


def test_marker_formats_are_held_to_their_markers_by_a_structural_tag() -> None:
    tag = json.loads(HERMES.structured_outputs(compact=True)["structural_tag"])
    fmt = tag["format"]
    assert (tag["type"], fmt["type"], fmt["begin"], fmt["end"]) == (
        "structural_tag",
        "tag",
        "<tool_call>\n",
        "\n</tool_call>",
    )
    assert fmt["content"] == {"type": "grammar", "grammar": compact_ebnf(HERMES.call_schema())}
    loose = json.loads(HERMES.structured_outputs(compact=False)["structural_tag"])
    assert loose["format"]["content"] == {"type": "json_schema", "json_schema": TOOL_CALL_SCHEMA}
    assert get_tool_format("json").structured_outputs(compact=True) == {"json": TOOL_CALL_SCHEMA}


def test_the_shipped_compact_grammars_match_the_current_schemas() -> None:
    # Built by xgrammar (`python -m codesearch_core.engines.tool_format` where vLLM is); a schema
    # change without a rebuild would make the grammar disagree with the validator.
    shipped = json.loads(GRAMMARS_FILE.read_text(encoding="utf-8"))
    wanted = {schema_digest(f.call_schema()) for f in TOOL_FORMATS.values() if f.begin or f.end}
    assert set(shipped) == wanted
    for grammar in shipped.values():
        assert grammar.startswith("root ::=") or "\nroot ::=" in grammar


def test_no_shipped_grammar_and_no_xgrammar_is_a_clear_error() -> None:
    with pytest.raises(EngineError, match="regenerate it with"):
        compact_ebnf({"type": "object", "title": "not ours"})


@pytest.mark.parametrize(
    ("text", "repairs"),
    [
        ('<tool_call>\n{"name":"ripgrep_search","arguments":{"pattern":"TODO"}}\n</tool_call>', ()),
        (
            'I will search.\n<tool_call>\n{"name":"ripgrep_search","arguments":{"pattern":"TODO"}}'
            "\n</tool_call>",
            ("text before <tool_call> dropped",),
        ),
        (
            '<tool_call>{"name":"ripgrep_search","arguments":{"pattern":"TODO"}}</tool_call> done',
            ("text after </tool_call> dropped",),
        ),
        (
            '<tool_call>\n{"name":"ripgrep_search","arguments":{"pattern":"TODO"}}',
            ("</tool_call> missing",),
        ),
        ('{"name":"ripgrep_search","arguments":{"pattern":"TODO"}}', ("<tool_call> missing",)),
        (
            '<tool_call>\n{"name":"ripgrep_search","arguments":{"pattern":"TO\tDO"}}\n</tool_call>',
            ("control characters in strings",),
        ),
    ],
)
def test_hermes_output_as_models_write_it(text: str, repairs: tuple[str, ...]) -> None:
    parsed = HERMES.parse(text)
    assert parsed.error == "" and parsed.value["name"] == "ripgrep_search"
    assert parsed.repairs == repairs


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("Sure! I cannot help with that.", "no <tool_call> in the output"),
        ("<tool_call>\n{not json\n</tool_call>", "invalid JSON"),
        ("", "empty output"),
    ],
)
def test_hermes_output_without_a_call_is_a_precise_error(text: str, error: str) -> None:
    parsed = HERMES.parse(text)
    assert parsed.value is None and parsed.error.startswith(error)


def test_a_list_of_calls_takes_the_first_and_says_so() -> None:
    xlam = get_tool_format("xlam")
    two = json.dumps([CALL, {"name": "ast_grep_search", "arguments": {}}])
    parsed = xlam.parse(two)
    assert parsed.value == CALL and parsed.repairs == ("first of 2 calls taken",)


@pytest.mark.parametrize("name", sorted(TOOL_FORMATS))
def test_each_format_counts_the_calls_an_answer_wrote_and_reads_the_first(name: str) -> None:
    tool_format = get_tool_format(name)
    other = {"name": "ast_grep_search", "arguments": {"pattern": "foo($A)", "language": "python"}}
    one = tool_format.render_call(CALL["name"], CALL["arguments"])
    read = read_call(one, tool_format=tool_format)
    assert (read.call is not None and read.call.to_dict(), read.calls) == (CALL, 1)
    if tool_format.as_list:  # one list of three calls
        body = json.dumps([{"name": c["name"], tool_format.arguments_key: c["arguments"]}
                           for c in (CALL, other, CALL)])  # fmt: skip
        three = tool_format.begin + body + tool_format.end
    else:  # three blocks, as Hermes writes parallel calls (Llama 3.1 separates them with "; ")
        sep = "; " if name == "llama3_json" else "\n"
        three = sep.join(
            tool_format.render_call(c["name"], c["arguments"]) for c in (CALL, other, CALL)
        )
    read = read_call(three, tool_format=tool_format)
    assert read.call is not None and read.call.to_dict() == CALL
    assert read.calls == 3


def test_a_marker_inside_the_calls_own_arguments_is_not_another_call() -> None:
    text = HERMES.render_call("ripgrep_search", {"pattern": "<tool_call>", "fixed_strings": True})
    read = read_call(text, tool_format=HERMES)
    assert read.call is not None and read.call.arguments["pattern"] == "<tool_call>"
    assert read.calls == 1


def test_a_cut_answer_is_the_length_error_whatever_the_format() -> None:
    for tool_format in TOOL_FORMATS.values():
        assert tool_format.parse("<tool_call>\n{", "length").error == LENGTH_ERROR


def test_unknown_format_lists_the_known_ones() -> None:
    with pytest.raises(EngineError, match="no tool format 'gorilla'; known formats: hermes"):
        get_tool_format("gorilla")
