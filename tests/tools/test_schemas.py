"""The tool-call and plan schemas: what they accept, what they reject, and how they say why."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from codesearch_core.errors import ToolCallError
from codesearch_core.models import ToolName
from codesearch_core.tools.schemas import (
    AST_GREP_LANGUAGES,
    COMPOSITE_PLAN_SCHEMA,
    MAX_PATTERN_CHARS,
    TOOL_CALL_SCHEMA,
    _plainly_valid,
    arguments_schema,
    parse_plan,
    parse_tool_call,
    validate_tool_call,
)

RG = "ripgrep_search"
AG = "ast_grep_search"


def rg(**arguments: Any) -> dict[str, Any]:
    return {"name": RG, "arguments": arguments}


def ag(**arguments: Any) -> dict[str, Any]:
    return {"name": AG, "arguments": arguments}


def walk(schema: Any) -> list[dict[str, Any]]:
    """Every sub-schema object, to check properties that must hold everywhere."""
    out: list[dict[str, Any]] = []
    if isinstance(schema, dict):
        out.append(schema)
        for value in schema.values():
            out.extend(walk(value))
    elif isinstance(schema, list):
        for value in schema:
            out.extend(walk(value))
    return out


@pytest.mark.parametrize("schema", [TOOL_CALL_SCHEMA, COMPOSITE_PLAN_SCHEMA])
def test_schema_is_valid_draft_2020_12(schema: dict[str, Any]) -> None:
    Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("schema", [TOOL_CALL_SCHEMA, COMPOSITE_PLAN_SCHEMA])
def test_every_object_is_closed_and_every_string_and_list_bounded(schema: dict[str, Any]) -> None:
    for sub in walk(schema):
        if sub.get("type") == "object":
            assert sub.get("additionalProperties") is False, sub
        if sub.get("type") == "string" and "enum" not in sub and "const" not in sub:
            # A regex bounds its own length ({m,n}$); vLLM refuses pattern + maxLength for xgrammar.
            if "pattern" in sub:
                assert "maxLength" not in sub and re.search(r"\{\d+,\d+\}\$$", sub["pattern"]), sub
            else:
                assert "maxLength" in sub, sub
        if sub.get("type") == "array":
            assert "maxItems" in sub, sub


def test_schema_avoids_keywords_xgrammar_rejects() -> None:
    text = json.dumps([TOOL_CALL_SCHEMA, COMPOSITE_PLAN_SCHEMA])
    assert "uniqueItems" not in text
    assert "patternProperties" not in text


@pytest.mark.parametrize(
    "call",
    [
        rg(pattern="TODO"),
        rg(
            pattern=r"(?<=password=)\S+",
            pcre2=True,
            file_types=["py"],
            globs=["!*.min.js"],
            paths=["src"],
            case_sensitive=False,
            smart_case=False,
            fixed_strings=False,
            word=True,
            multiline=False,
            context_lines=2,
        ),
        ag(pattern="DB.query($$$ARGS)", language="javascript"),
        ag(pattern="useEffect($$$)", language="tsx", paths=["src/components"]),
        ag(
            rule={"kind": "function_declaration", "has": {"pattern": "await $X", "stopBy": "end"}},
            language="javascript",
        ),
        ag(rule={"any": [{"kind": "call_expression"}, {"not": {"regex": "^x"}}]}, language="go"),
    ],
)
def test_valid_calls_parse_and_agree_with_the_json_schema(call: dict[str, Any]) -> None:
    parsed = parse_tool_call(call)
    assert parsed.to_dict() == call
    assert Draft202012Validator(TOOL_CALL_SCHEMA).is_valid(call)


@pytest.mark.parametrize(
    ("call", "field", "says"),
    [
        ({"name": "grep", "arguments": {}}, "name", "ast_grep_search, ripgrep_search"),
        ({"name": RG}, "arguments", "JSON object"),
        (rg(), "arguments", "`pattern`"),
        (rg(pattern=""), "arguments.pattern", "empty"),
        (rg(pattern="x" * (MAX_PATTERN_CHARS + 1)), "arguments.pattern", "too long"),
        (rg(pattern="x", pcre=True), "arguments", "unknown field(s): pcre"),
        (rg(pattern="x", file_types="c"), "arguments.file_types", "array"),
        (rg(pattern="x", file_types=["c; rm -rf /"]), "arguments.file_types[0]", "match"),
        (rg(pattern="x", context_lines=99), "arguments.context_lines", "99"),
        (rg(pattern="x", paths=["p"] * 17), "arguments.paths", "too many items"),
        (ag(pattern="f($A)", language="js"), "arguments.language", "javascript"),
        (ag(pattern="f($A)"), "arguments", "`language`"),
        (ag(pattern="f", rule={"kind": "x"}, language="go"), "arguments", "not both"),
        (ag(rule={}, language="go"), "arguments.rule", ""),
        (ag(rule={"has": {"has": {"has": {"has": {"kind": "x"}}}}}, language="go"), "has", "has"),
        ({"name": RG, "arguments": {"pattern": "x"}, "extra": 1}, "call", "extra"),
        ([RG], "call", "JSON object"),
    ],
)
def test_invalid_calls_name_the_field(call: Any, field: str, says: str) -> None:
    with pytest.raises(ToolCallError) as info:
        parse_tool_call(call)
    assert field in info.value.field
    assert says in str(info.value)
    assert validate_tool_call(call) == str(info.value)
    assert not Draft202012Validator(TOOL_CALL_SCHEMA).is_valid(call)


@pytest.mark.parametrize(
    ("call", "field", "says"),
    [
        (rg(pattern="fo\x00o"), "arguments.pattern", "a NUL byte (at character 2)"),
        (rg(pattern="x", globs=["*.py", "*\x00"]), "arguments.globs[1]", "a NUL byte"),
        (
            ag(rule={"has": {"pattern": "f(\x00)"}}, language="go"),
            "arguments.rule.has.pattern",
            "a NUL byte",
        ),
        (rg(pattern="a\ud800"), "arguments.pattern", "a lone surrogate ('\\ud800' at character 1)"),
        (
            ag(pattern="f($A)", language="go", paths=["a\udcff.go"]),
            "arguments.paths[0]",
            "surrogate",
        ),
    ],
)
def test_text_no_tool_can_take_is_refused_after_the_schema(
    call: dict[str, Any], field: str, says: str
) -> None:
    # The JSON Schema lets it through (a `pattern` would make xgrammar drop maxLength).
    assert Draft202012Validator(TOOL_CALL_SCHEMA).is_valid(call)
    with pytest.raises(ToolCallError) as info:
        parse_tool_call(call)
    assert info.value.field == field
    assert says in info.value.detail
    with pytest.raises(ToolCallError) as in_plan:
        parse_plan({"steps": [{"call": call}]})
    assert in_plan.value.field == f"steps[0].call.{field}"


def test_a_nul_in_a_path_is_left_to_the_corpus_check() -> None:
    # paths.resolve_in_corpus refuses it when the call runs, as `path_outside_corpus`
    # (tests/tools/test_hostile_calls.py::test_a_nul_byte_in_a_path_is_refused_before_running).
    assert parse_tool_call(rg(pattern="x", paths=["a\x00"])).arguments["paths"] == ["a\x00"]


def test_validate_tool_call_returns_none_for_a_valid_call() -> None:
    assert validate_tool_call(rg(pattern="x")) is None


def test_language_enum_is_ast_greps_own_names() -> None:
    assert "javascript" in AST_GREP_LANGUAGES and "js" not in AST_GREP_LANGUAGES
    assert {"typescript", "tsx", "python", "go", "c", "cpp", "rust", "java"} <= set(
        AST_GREP_LANGUAGES
    )


def test_parsed_call_is_detached_from_the_input() -> None:
    raw = rg(pattern="x", paths=["a"])
    call = parse_tool_call(raw)
    raw["arguments"]["paths"].append("b")
    assert call.arguments["paths"] == ["a"]


def test_call_hash_ignores_key_order() -> None:
    a = parse_tool_call({"name": RG, "arguments": {"pattern": "x", "word": True}})
    b = parse_tool_call({"arguments": {"word": True, "pattern": "x"}, "name": RG})
    assert a.call_hash == b.call_hash and hash(a) == hash(b)


def test_plan_of_narrow_then_confirm() -> None:
    plan = parse_plan(
        {
            "steps": [
                {"call": rg(pattern="DB\\.query", file_types=["js"])},
                {
                    "call": ag(pattern="DB.query($$$)", language="javascript"),
                    "restrict_to_previous": True,
                },
            ]
        }
    )
    assert [s.call.name for s in plan.steps] == [ToolName.RIPGREP, ToolName.AST_GREP]
    assert plan.steps[1].restrict_to_previous


@pytest.mark.parametrize(
    ("plan", "field"),
    [
        ({"steps": []}, "steps"),
        ({"steps": [{"call": rg(pattern="x")}] * 4}, "steps"),
        ({"steps": [{"call": rg(pattern="x"), "restrict_to_previous": True}]}, "steps[0].restrict"),
        (
            {"steps": [{"call": rg(pattern="x")}, {"call": ag(pattern="x")}]},
            "steps[1].call.arguments",
        ),
        ({"steps": [{"call": rg(pattern="x")}], "why": "?"}, "plan"),
    ],
)
def test_invalid_plans_name_the_step(plan: dict[str, Any], field: str) -> None:
    with pytest.raises(ToolCallError) as info:
        parse_plan(plan)
    assert info.value.field.startswith(field)


# --- the plain-shape shortcut past jsonschema -------------------------------------------------

_text = st.one_of(
    st.text(max_size=4),
    st.text(alphabet="ab+-_\n .*", min_size=30, max_size=34),
    st.sampled_from(["", "c", "py", "src/a.py", "x" * 256, "x" * 257, "y" * 1000, "y" * 1001]),
)
_value = st.one_of(
    _text,
    st.booleans(),
    st.integers(-2, 12),
    st.sampled_from([3.0, 2.5, None, {}, {"x": 1}]),
    st.lists(_text, max_size=18),
    st.lists(st.one_of(_text, st.integers(0, 2), st.none()), max_size=3),
)
_keys = st.sampled_from(
    ["pattern", "language", "paths", "globs", "file_types", "case_sensitive", "smart_case",
     "fixed_strings", "word", "multiline", "pcre2", "context_lines", "rule", "other"]
)  # fmt: skip
_arguments = st.dictionaries(
    _keys,
    _value,
    max_size=6,
).map(lambda d: d if "pattern" in d else {**d, "pattern": "x"})
_language = st.sampled_from([*AST_GREP_LANGUAGES[:3], "js", "Python"])


@settings(max_examples=800, deadline=None)
@given(st.sampled_from(list(ToolName)), _arguments, _language, st.booleans())
def test_the_shortcut_accepts_only_what_the_schema_accepts(
    tool: ToolName, arguments: dict[str, Any], language: str, with_language: bool
) -> None:
    if with_language:
        arguments = {**arguments, "language": language}
    if _plainly_valid(tool, arguments):
        schema = arguments_schema(tool, arguments)
        assert list(Draft202012Validator(schema).iter_errors(arguments)) == []


@pytest.mark.parametrize(
    "call",
    [
        rg(pattern="TODO"),
        rg(pattern="a", paths=["src"], globs=["*.py"], file_types=["py"], context_lines=2,
           pcre2=True, case_sensitive=False, smart_case=False, fixed_strings=False, word=True,
           multiline=False),
        {"name": AG, "arguments": {"pattern": "f($A)", "language": "python", "paths": ["a"]}},
    ],
)  # fmt: skip
def test_plain_calls_take_the_shortcut_and_parse_to_a_copy(call: dict[str, Any]) -> None:
    assert _plainly_valid(ToolName(call["name"]), call["arguments"])
    parsed = parse_tool_call(call)
    assert parsed.arguments == call["arguments"]
    for key, value in call["arguments"].items():
        if isinstance(value, list):
            assert parsed.arguments[key] is not value
