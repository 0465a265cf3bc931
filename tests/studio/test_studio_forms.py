"""Schema-driven call forms: the fields come from the schema, values round-trip, errors land on
the field they are about."""

from __future__ import annotations

import pytest

from codesearch_core.models import ToolName
from codesearch_core.studio.forms import (
    AstGrepForm,
    FieldKind,
    ast_grep_form_of,
    build_call,
    field_errors,
    form_fields,
    form_values,
)
from codesearch_core.tools.schemas import RIPGREP_ARGUMENTS


def test_ripgrep_fields_are_the_schema_properties_in_order_with_kinds() -> None:
    fields = form_fields(ToolName.RIPGREP)
    assert [f.name for f in fields] == list(RIPGREP_ARGUMENTS["properties"])
    kinds = {f.name: f.kind for f in fields}
    assert kinds["pattern"] is FieldKind.TEXT
    assert kinds["file_types"] is FieldKind.LIST
    assert kinds["pcre2"] is FieldKind.BOOL
    assert kinds["context_lines"] is FieldKind.INT
    assert [f.name for f in fields if f.required] == ["pattern"]


def test_ast_grep_language_is_a_choice_of_the_schema_languages() -> None:
    language = next(f for f in form_fields(ToolName.AST_GREP) if f.name == "language")
    assert language.kind is FieldKind.CHOICE
    assert "tsx" in language.options and language.required


def test_the_rule_form_edits_the_rule_as_json_instead_of_a_pattern() -> None:
    names = {f.name: f.kind for f in form_fields(ToolName.AST_GREP, AstGrepForm.RULE)}
    assert names["rule"] is FieldKind.JSON
    assert "pattern" not in names


def test_an_untouched_form_plus_a_pattern_gives_the_shortest_call() -> None:
    values = form_values(None, ToolName.RIPGREP)
    values["pattern"] = "TODO"
    result = build_call(ToolName.RIPGREP, values)
    assert result.call == {"name": "ripgrep_search", "arguments": {"pattern": "TODO"}}
    assert result.parsed is not None and not result.errors


def test_a_call_survives_the_round_trip_through_form_values() -> None:
    call = {
        "name": "ripgrep_search",
        "arguments": {
            "pattern": "(?<=password=)\\S+",
            "pcre2": True,
            "globs": ["*.conf", "!vendor/**"],
            "case_sensitive": False,
            "context_lines": 2,
        },
    }
    result = build_call(ToolName.RIPGREP, form_values(call, ToolName.RIPGREP))
    assert result.call == call


def test_a_rule_call_survives_the_round_trip() -> None:
    call = {
        "name": "ast_grep_search",
        "arguments": {"rule": {"pattern": "await $X", "inside": {"kind": "for_statement"}},
                      "language": "typescript"},
    }  # fmt: skip
    shape = ast_grep_form_of(call)
    assert shape is AstGrepForm.RULE
    result = build_call(ToolName.AST_GREP, form_values(call, ToolName.AST_GREP, shape), shape)
    assert result.call == call and result.parsed is not None


def test_every_bad_field_gets_its_own_message() -> None:
    values = form_values(None, ToolName.RIPGREP)
    values.update(pattern="", file_types="c\nnot a type!", context_lines=99)
    result = build_call(ToolName.RIPGREP, values)
    assert result.parsed is None
    assert set(result.errors) == {"pattern", "file_types", "context_lines"}
    assert result.errors["pattern"] == "must not be empty"
    assert "not a type!" in result.errors["file_types"]


def test_a_rule_that_is_not_json_says_where_and_other_fields_are_still_checked() -> None:
    values = {"rule": '{"pattern": ', "language": "python", "paths": "src"}
    result = build_call(ToolName.AST_GREP, values, AstGrepForm.RULE)
    assert result.parsed is None
    assert result.errors["rule"].startswith("not valid JSON")
    assert "pattern" not in result.errors  # the rule form has no pattern to miss


def test_unknown_fields_in_raw_json_are_a_whole_call_error() -> None:
    errors = field_errors({"name": "ripgrep_search", "arguments": {"pattern": "a", "bogus": 1}})
    assert errors == {"": "arguments: unknown field(s): bogus"}


@pytest.mark.parametrize("call", [{"name": "grep", "arguments": {}}, {"name": "ripgrep_search"}])
def test_a_call_without_known_name_or_arguments_is_a_whole_call_error(
    call: dict[str, object],
) -> None:
    assert list(field_errors(call)) == [""]


def test_json_text_becomes_a_call_or_says_what_is_wrong() -> None:
    from codesearch_core.studio.forms import NOT_A_CALL, call_from_json_text

    ok = call_from_json_text('{"name": "ripgrep_search", "arguments": {"pattern": "TODO"}}')
    assert ok.parsed is not None and ok.parsed.arguments["pattern"] == "TODO" and not ok.errors
    bad_json = call_from_json_text('{"name": ')
    assert bad_json.parsed is None and bad_json.errors[""].startswith("not valid JSON")
    assert call_from_json_text("[1]").errors == {"": NOT_A_CALL}
    assert call_from_json_text("  ").errors == {"": NOT_A_CALL}
    schema = call_from_json_text('{"name": "ripgrep_search", "arguments": {"pattern": ""}}')
    assert schema.parsed is None and "pattern" in schema.errors
    assert call_from_json_text("[" * 100_000).errors[""].startswith("not valid JSON")
