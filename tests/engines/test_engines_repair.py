"""Parsing and repairing model output: every repair is recorded, nothing is dropped silently."""

from __future__ import annotations

import json
from typing import Any

import pytest

from codesearch_core.engines.base import proposal_from_text
from codesearch_core.engines.repair import (
    CONTROL_CHARS_REPAIR,
    LENGTH_ERROR,
    NESTING_ERROR,
    parse_model_output,
    validate_and_repair,
)
from codesearch_core.models import ToolName
from codesearch_core.tools.schemas import validate_tool_call


def rg(**arguments: object) -> dict[str, object]:
    return {"name": "ripgrep_search", "arguments": arguments}


def sg(**arguments: object) -> dict[str, object]:
    return {"name": "ast_grep_search", "arguments": arguments}


# --- parse_model_output -------------------------------------------------------------------------


def test_valid_json_parses_without_repairs() -> None:
    parsed = parse_model_output(json.dumps(rg(pattern="TODO")), "stop")
    assert parsed.value == rg(pattern="TODO")
    assert parsed.error == ""
    assert parsed.repairs == ()


def test_finish_reason_length_is_an_error_even_when_the_text_parses() -> None:
    parsed = parse_model_output(json.dumps(rg(pattern="TODO")), "length")
    assert parsed.value is None
    assert parsed.error == LENGTH_ERROR == "finish_reason=length: output cut at max_tokens"


def test_invalid_json_error_gives_the_position() -> None:
    parsed = parse_model_output('{"name": "ripgrep_search", "arguments": {"pattern": ', "stop")
    assert parsed.value is None
    assert parsed.error.startswith("invalid JSON: ")
    assert "line 1 column 53 (char 52)" in parsed.error


def test_raw_control_characters_in_strings_are_accepted_and_recorded() -> None:
    raw = '{"name": "ripgrep_search", "arguments": {"pattern": "a\x07b\tc"}}'
    with pytest.raises(json.JSONDecodeError):
        json.loads(raw)
    parsed = parse_model_output(raw, "stop")
    assert parsed.value == rg(pattern="a\x07b\tc")
    assert parsed.repairs == (CONTROL_CHARS_REPAIR,)


def test_markdown_code_fence_is_removed_and_recorded() -> None:
    parsed = parse_model_output('```json\n{"name": "x", "arguments": {}}\n```')
    assert parsed.value == {"name": "x", "arguments": {}}
    assert parsed.repairs == ("markdown code fence removed",)


def test_text_after_the_json_value_is_dropped_and_recorded() -> None:
    parsed = parse_model_output('{"a": 1}\nThis call finds the TODOs.')
    assert parsed.value == {"a": 1}
    assert parsed.repairs == ("text after the JSON value dropped",)


def test_empty_output_is_an_error() -> None:
    assert parse_model_output("  \n").error == "empty output: the model wrote no JSON"


# --- validate_and_repair: aliases ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("alias", "language"),
    [
        ("js", "javascript"),
        ("jsx", "javascript"),
        ("py", "python"),
        ("ts", "typescript"),
        ("golang", "go"),
        ("c++", "cpp"),
        ("rs", "rust"),
        ("sh", "bash"),
        ("cs", "csharp"),
        ("kt", "kotlin"),
        ("rb", "ruby"),
        ("yml", "yaml"),
        ("Python", "python"),
    ],
)
def test_language_alias_is_repaired(alias: str, language: str) -> None:
    result = validate_and_repair(sg(pattern="foo($A)", language=alias))
    assert result.error == ""
    assert result.call is not None
    assert result.call.arguments["language"] == language
    assert result.repairs == (f"language {alias!r} → {language!r}",)


def test_unknown_language_is_not_guessed() -> None:
    result = validate_and_repair(sg(pattern="foo($A)", language="cobol"))
    assert result.call is None
    assert result.error.startswith("arguments.language: 'cobol' is not one of: bash, c, cpp")


@pytest.mark.parametrize(
    ("alias", "file_type"),
    [("javascript", "js"), ("golang", "go"), ("rs", "rust"), ("c++", "cpp"), ("shell", "sh")],
)
def test_rg_file_type_alias_is_repaired(alias: str, file_type: str) -> None:
    result = validate_and_repair(rg(pattern="x", file_types=[alias]))
    assert result.call is not None
    assert result.call.arguments["file_types"] == [file_type]
    assert result.repairs == (f"file type {alias!r} → {file_type!r}",)


@pytest.mark.parametrize(
    ("name", "tool"),
    [("ripgrep", ToolName.RIPGREP), ("rg", ToolName.RIPGREP), ("ast-grep", ToolName.AST_GREP)],
)
def test_tool_name_alias_is_repaired(name: str, tool: ToolName) -> None:
    args = {"pattern": "x", "language": "go"} if tool is ToolName.AST_GREP else {"pattern": "x"}
    result = validate_and_repair({"name": name, "arguments": args})
    assert result.call is not None and result.call.name is tool
    assert result.repairs == (f"tool name {name!r} → {tool.value}",)


# --- validate_and_repair: pcre2 -----------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern", [r"(?<=password=)\S+", r"foo(?!bar)", r"(?=x)y", r"(\w+) \1", r"(?<!\w)cafe"]
)
def test_pcre2_is_set_for_look_arounds_and_back_references(pattern: str) -> None:
    result = validate_and_repair(rg(pattern=pattern))
    assert result.call is not None
    assert result.call.arguments["pcre2"] is True
    assert result.repairs == ("pcre2 set: the pattern uses a look-around or back-reference",)


def test_pcre2_is_not_set_for_a_plain_regex_or_a_fixed_string() -> None:
    plain = validate_and_repair(rg(pattern=r"TODO\(\w+\)"))
    fixed = validate_and_repair(rg(pattern="(?=x)", fixed_strings=True))
    assert plain.call is not None and "pcre2" not in plain.call.arguments
    assert fixed.call is not None and "pcre2" not in fixed.call.arguments
    assert plain.repairs == fixed.repairs == ()


# --- validate_and_repair: unknown fields and shapes ---------------------------------------------


def test_unknown_top_level_fields_are_dropped_and_recorded() -> None:
    result = validate_and_repair({**rg(pattern="x"), "id": "call_1", "reasoning": "text"})
    assert result.call is not None and result.call.to_dict() == rg(pattern="x")
    assert result.repairs == ("unknown field(s) dropped: id, reasoning",)


def test_unknown_arguments_are_dropped_and_recorded() -> None:
    result = validate_and_repair(rg(pattern="x", max_count=3, hidden=True))
    assert result.call is not None and result.call.to_dict() == rg(pattern="x")
    assert result.repairs == ("unknown argument(s) dropped: hidden, max_count",)


def test_arguments_given_as_a_json_string_are_decoded() -> None:
    result = validate_and_repair({"name": "ripgrep_search", "arguments": '{"pattern": "TODO"}'})
    assert result.call is not None and result.call.to_dict() == rg(pattern="TODO")
    assert result.repairs == ("`arguments` decoded from a JSON string",)


def test_arguments_string_that_does_not_decode_is_a_precise_error() -> None:
    result = validate_and_repair({"name": "ripgrep_search", "arguments": '{"pattern": '})
    assert result.call is None
    assert result.error.startswith("arguments: a JSON string that does not decode")


def test_openai_function_wrapper_is_unwrapped() -> None:
    obj = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "ripgrep_search", "arguments": '{"pattern": "TODO"}'},
    }
    result = validate_and_repair(obj)
    assert result.call is not None and result.call.to_dict() == rg(pattern="TODO")
    assert result.repairs == (
        "OpenAI `function` wrapper unwrapped",
        "`arguments` decoded from a JSON string",
    )


def test_tool_and_args_keys_are_renamed() -> None:
    result = validate_and_repair(
        {"tool": "ast_grep_search", "args": {"pattern": "f()", "lang": "py"}}
    )
    assert result.call is not None
    assert result.call.to_dict() == sg(pattern="f()", language="python")
    assert result.repairs == (
        "`tool` renamed to `name`",
        "`args` renamed to `arguments`",
        "argument `lang` renamed to `language`",
        "language 'py' → 'python'",
    )


def test_file_types_string_becomes_a_list() -> None:
    result = validate_and_repair(rg(pattern="x", file_types="c, go"))
    assert result.call is not None and result.call.arguments["file_types"] == ["c", "go"]
    assert result.repairs == ("`file_types` string → list ['c', 'go']",)


def test_a_repeated_file_type_is_dropped_and_recorded() -> None:
    result = validate_and_repair(rg(pattern="x", file_types=["js", "c", "javascript"]))
    assert result.call is not None and result.call.arguments["file_types"] == ["js", "c"]
    assert result.repairs == (
        "file type 'javascript' → 'js'",
        "repeated file type 'js' dropped",
    )


def test_ignore_case_becomes_case_sensitive_false() -> None:
    result = validate_and_repair(rg(pattern="x", ignore_case=True))
    assert result.call is not None and result.call.arguments == {
        "pattern": "x",
        "case_sensitive": False,
    }


def test_a_single_element_list_is_unwrapped() -> None:
    result = validate_and_repair([rg(pattern="x")])
    assert result.call is not None
    assert result.repairs == ("single-element list unwrapped",)


def test_a_valid_call_needs_no_repairs() -> None:
    call = sg(pattern="useEffect($$$)", language="tsx", paths=["src"])
    result = validate_and_repair(call)
    assert result == (result.call, (), "")
    assert result.call is not None and result.call.to_dict() == call


def test_unrepairable_output_keeps_the_schema_error() -> None:
    result = validate_and_repair(rg(pattern=""))
    assert result.call is None
    assert (
        result.error == validate_tool_call(rg(pattern="")) == "arguments.pattern: must not be empty"
    )


def test_a_non_object_is_a_precise_error() -> None:
    result = validate_and_repair("ripgrep TODO")
    assert result.call is None
    assert result.error == "call: a tool call must be a JSON object, got str"


def test_repairs_made_before_a_failure_are_kept() -> None:
    result = validate_and_repair(
        {"tool": "ripgrep", "arguments": {"pattern": "x", "context_lines": 99}}
    )
    assert result.call is None
    assert "context_lines" in result.error
    assert result.repairs[0] == "`tool` renamed to `name`"


# --- proposal_from_text: the shared path from text to Proposal ----------------------------------


def test_proposal_keeps_raw_text_and_error_when_cut_at_max_tokens() -> None:
    raw = '{"name": "ripgrep_search", "arguments": {"pattern": "TO'
    proposal = proposal_from_text("bp1", raw, engine="e", model="m", finish_reason="length")
    assert proposal.raw_text == raw
    assert not proposal.valid and proposal.call is None
    assert proposal.error == LENGTH_ERROR
    assert proposal.finish_reason == "length"


def test_proposal_keeps_raw_text_when_json_is_invalid() -> None:
    proposal = proposal_from_text("bp1", "not json", engine="e", model="m", finish_reason="stop")
    assert proposal.raw_text == "not json"
    assert not proposal.valid
    assert proposal.error.startswith("invalid JSON: Expecting value at line 1 column 1")


def test_proposal_records_parse_and_repair_steps_in_order() -> None:
    raw = '{"name": "rg", "arguments": {"pattern": "(?<=k=)\x01v"}}'
    proposal = proposal_from_text("bp1", raw, engine="e", model="m", finish_reason="stop")
    assert proposal.valid and proposal.call is not None
    assert proposal.repairs == (
        CONTROL_CHARS_REPAIR,
        "tool name 'rg' → ripgrep_search",
        "pcre2 set: the pattern uses a look-around or back-reference",
    )


# --- nesting deeper than Python's JSON decoder follows ------------------------------------------


def deepest_decodable() -> int:
    """The deepest `[...]` json.loads decodes from here (about the recursion limit)."""
    depth = 1
    while True:
        try:
            json.loads("[" * depth * 2 + "]" * depth * 2)
        except RecursionError:
            break
        depth *= 2
    low, high = depth, depth * 2
    while low + 1 < high:
        middle = (low + high) // 2
        try:
            json.loads("[" * middle + "]" * middle)
            low = middle
        except RecursionError:
            high = middle
    return low


def test_output_nested_too_deep_is_an_error_not_a_raise() -> None:
    fenced = "```json\n" + "[" * 100_000 + "]" * 100_000 + "\n```"
    parsed = parse_model_output(fenced)
    assert (parsed.value, parsed.error) == (None, NESTING_ERROR)
    assert parsed.repairs == ("markdown code fence removed",)
    assert NESTING_ERROR.startswith("invalid JSON: nesting too deep")


def test_arguments_string_nested_too_deep_is_an_error_not_a_raise() -> None:
    result = validate_and_repair({"name": "rg", "arguments": "[" * 100_000 + "]" * 100_000})
    assert (result.call, result.error) == (None, f"arguments: {NESTING_ERROR}")
    assert result.repairs == ("tool name 'rg' → ripgrep_search",)


@pytest.mark.parametrize(
    "wrap",
    [
        lambda deep: deep,
        lambda deep: '{"name": "ripgrep_search", "arguments": {"pattern": ' + deep + "}}",
        lambda deep: '{"name": "ripgrep_search", "arguments": ' + deep + "}",
        lambda deep: '{"tool_calls": ' + deep + "}",
    ],
    ids=["bare", "in-pattern", "as-arguments", "in-tool-calls"],
)
def test_nesting_around_the_decoders_limit_becomes_a_proposal(wrap: Any) -> None:
    # Each step of the path (decode, unwrap, validate, error message) recurses a little deeper,
    # so every depth near the limit must end as a proposal, whichever step gives up.
    limit = deepest_decodable()
    for depth in range(limit - 40, limit + 3):
        raw = wrap("[" * depth + "]" * depth)
        proposal = proposal_from_text("bp1", raw, engine="e", model="m", finish_reason="stop")
        assert not proposal.valid and proposal.error, depth
        assert proposal.raw_text == raw
