"""The one prompt builder: rules, schema, few-shot examples, intent; stored as JSON with proposals."""

from __future__ import annotations

import json

from codesearch_core.engines.prompt import (
    DEFAULT_RULES,
    JSON_ANSWER_RULE,
    Example,
    PromptConfig,
    build_messages,
    messages_to_json,
    messages_to_text,
)
from codesearch_core.models import ToolCall, ToolName
from codesearch_core.tools.schemas import TOOL_CALL_SCHEMA, parse_tool_call

EXAMPLE_CALL = parse_tool_call(
    {"name": "ripgrep_search", "arguments": {"pattern": "TODO", "file_types": ["py"]}}
)


def test_messages_are_system_then_user_intent() -> None:
    messages = build_messages("find TODO markers in Python files")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[-1]["content"] == "find TODO markers in Python files"


def test_system_text_states_the_tool_choice_pcre2_type_filter_and_path_rules() -> None:
    system = build_messages("x")[0]["content"]
    assert "ast_grep_search" in system and "ripgrep_search" in system
    assert '"pcre2": true' in system and "(?<=" in system
    assert "file_types" in system and "fmt.Printf" in system
    assert "paths are relative to the corpus root" in system
    assert all(rule in system for rule in DEFAULT_RULES)


def test_compact_schema_lists_every_argument_of_both_tools() -> None:
    system = build_messages("x")[0]["content"]
    for argument in ("pattern", "language", "paths", "file_types", "globs", "pcre2", "word"):
        assert argument in system
    assert "$defs" not in system


def test_full_schema_embeds_the_json_schema_verbatim() -> None:
    system = build_messages("x", PromptConfig(schema="full"))[0]["content"]
    assert json.dumps(TOOL_CALL_SCHEMA, ensure_ascii=False) in system


def test_schema_none_leaves_it_out() -> None:
    system = build_messages("x", PromptConfig(schema="none"))[0]["content"]
    assert "Tools:" not in system and "JSON Schema" not in system


def test_custom_system_text_and_rules_replace_the_defaults() -> None:
    config = PromptConfig(system="Be terse.", rules=("Always use rg.",), schema="none")
    # The json fallback always says how to answer; a tool template says it for the model.
    assert build_messages("x", config)[0]["content"] == (
        f"Be terse.\n\nRules:\n- Always use rg.\n- {JSON_ANSWER_RULE}"
    )
    templated = build_messages("x", config, template_tools=True)
    assert templated[0]["content"] == "Be terse.\n\nRules:\n- Always use rg."


def test_with_a_tool_template_examples_are_tool_calls_with_their_results() -> None:
    examples = [Example("find TODOs in Python", EXAMPLE_CALL, result="3 findings in 2 files")]
    messages = build_messages("find FIXMEs", examples=examples, template_tools=True)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "user"]
    (call,) = messages[2]["tool_calls"]
    assert call["type"] == "function" and call["id"] == messages[3]["tool_call_id"]
    assert call["function"]["name"] == EXAMPLE_CALL.name.value
    assert json.loads(call["function"]["arguments"]) == EXAMPLE_CALL.to_dict()["arguments"]
    assert messages[3]["content"] == "3 findings in 2 files"
    # The schema is the template's business: no argument list in the system prompt.
    assert "arguments:" not in messages[0]["content"]
    assert "[assistant]\ntool call ripgrep_search: {" in messages_to_text(messages)


def test_examples_become_user_assistant_turns_before_the_intent() -> None:
    examples = [Example("find TODOs in Python", EXAMPLE_CALL)]
    messages = build_messages("find FIXMEs", examples=examples)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[1]["content"] == "find TODOs in Python"
    assert json.loads(messages[2]["content"]) == EXAMPLE_CALL.to_dict()
    assert messages[3]["content"] == "find FIXMEs"


def test_examples_are_capped_by_max_examples() -> None:
    calls = [ToolCall(ToolName.RIPGREP, {"pattern": f"p{i}"}) for i in range(6)]
    examples = [Example(f"intent {i}", c) for i, c in enumerate(calls)]
    messages = build_messages("x", PromptConfig(max_examples=2), examples)
    assert [m["content"] for m in messages if m["role"] == "user"] == [
        "intent 0",
        "intent 1",
        "x",
    ]


def test_stored_prompt_is_the_messages_as_json() -> None:
    messages = build_messages("finde café")
    stored = messages_to_json(messages)
    assert json.loads(stored) == messages
    assert "café" in stored


def test_text_rendering_shows_each_role() -> None:
    text = messages_to_text([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])
    assert text == "[system]\nS\n\n[user]\nU"
