"""A pattern ast-grep reads as another construct is named in the result, not a silent 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codesearch_core.cli import main
from codesearch_core.tools import parse_tool_call, run_tool_call
from codesearch_core.tools.pattern_check import CALL_KINDS, misread_warning, parsed_kind

GO = (
    'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Printf("x %d", 1)\n\tfmt.Printf("y")\n}\n'
)


def _sg(pattern: str, language: str) -> object:
    return parse_tool_call(
        {"name": "ast_grep_search", "arguments": {"pattern": pattern, "language": language}}
    )


@pytest.fixture
def go_corpus(tmp_path: Path) -> Path:
    (tmp_path / "main.go").write_text(GO, encoding="utf-8")
    return tmp_path


def test_a_go_call_pattern_read_as_a_type_conversion_warns_and_says_what_finds_the_calls(
    go_corpus: Path,
) -> None:
    result = run_tool_call(_sg("fmt.Printf($$$ARGS)", "go"), go_corpus)  # type: ignore[arg-type]
    assert result.ok and result.findings == ()
    (warning,) = result.warnings
    assert "read the pattern as a type_conversion_expression, not a call, in go" in warning
    # The rule the warning suggests finds both calls, the one-argument one too.
    rule = json.loads(warning[warning.index("{") : warning.index("} (") + 1])
    fixed = parse_tool_call(
        {"name": "ast_grep_search", "arguments": {"rule": rule, "language": "go"}}
    )
    assert [f.start_line for f in run_tool_call(fixed, go_corpus).findings] == [6, 7]


def test_patterns_that_parse_as_written_or_find_something_carry_no_warning(
    go_corpus: Path,
) -> None:
    found = run_tool_call(_sg("fmt.Printf($A, $$$)", "go"), go_corpus)  # type: ignore[arg-type]
    assert found.findings and found.warnings == ()
    absent = run_tool_call(_sg("log.Fatal($A, $$$)", "go"), go_corpus)  # type: ignore[arg-type]
    assert absent.ok and absent.findings == () and absent.warnings == ()  # a call, just absent


@pytest.mark.parametrize(
    ("pattern", "language", "kind"),
    [
        ("obj.foo($$$)", "python", "call"),
        ("obj.foo($$$)", "javascript", "call_expression"),
        ("obj.foo($$$)", "java", "method_invocation"),
        ("obj.Foo($$$)", "csharp", "invocation_expression"),
        ("$obj->foo($$$)", "php", "member_call_expression"),
        ("println!($$$)", "rust", "macro_invocation"),
    ],
)
def test_calls_in_each_language_parse_as_calls(pattern: str, language: str, kind: str) -> None:
    call = _sg(pattern, language)
    assert parsed_kind(call) == kind and kind in CALL_KINDS  # type: ignore[arg-type]
    assert misread_warning(call) is None  # type: ignore[arg-type]


def test_a_php_method_call_written_with_a_dot_is_a_concatenation() -> None:
    warning = misread_warning(_sg("obj.foo($$$)", "php"))  # type: ignore[arg-type]
    assert warning and "binary_expression" in warning and "`$obj->name($$$)`" in warning


def test_the_command_line_prints_the_warning(
    go_corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    call = json.dumps(
        {"name": "ast_grep_search", "arguments": {"pattern": "fmt.Printf($$$A)", "language": "go"}}
    )
    assert main(["run", call, "--corpus", str(go_corpus)]) == 0
    assert "warning: ast-grep read the pattern as a type_conversion_expression" in (
        capsys.readouterr().err
    )
