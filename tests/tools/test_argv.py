"""Building argv from a call: pure, no search runs here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codesearch_core.errors import ErrorKind, ToolCallError
from codesearch_core.tools.argv import (
    AST_GREP_RULE_ID,
    ArgvError,
    ast_grep_argv,
    ripgrep_argv,
    ripgrep_files_argv,
    tool_argv,
)
from codesearch_core.tools.schemas import parse_tool_call


def rg(**arguments: Any) -> Any:
    return parse_tool_call({"name": "ripgrep_search", "arguments": arguments})


def sg(**arguments: Any) -> Any:
    return parse_tool_call({"name": "ast_grep_search", "arguments": arguments})


def after(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def joined(argv: list[str], flag: str) -> str:
    """The value of the one `flag=value` item (how ast-grep's values are passed)."""
    (value,) = [a.removeprefix(f"{flag}=") for a in argv if a.startswith(f"{flag}=")]
    return value


def test_rg_argv_is_json_ignoring_user_config_and_ignore_files(tmp_path: Path) -> None:
    argv = ripgrep_argv(rg(pattern="TODO"), tmp_path)
    assert Path(argv[0]).name == "rg"
    assert {"--json", "--no-config", "--no-ignore", "--crlf"} <= set(argv)
    assert argv[-3:] == ["TODO", "--", "."]
    assert after(argv, "--regexp") == "TODO"


@pytest.mark.parametrize("pattern", ["-v", "--files", "--pre=sh"])
def test_a_pattern_that_looks_like_an_option_stays_the_pattern(
    tmp_path: Path, pattern: str
) -> None:
    argv = ripgrep_argv(rg(pattern=pattern), tmp_path)
    assert after(argv, "--regexp") == pattern
    assert argv.count(pattern) == 1


def test_a_path_that_looks_like_an_option_comes_after_double_dash(tmp_path: Path) -> None:
    argv = ripgrep_argv(rg(pattern="x", paths=["-rf"]), tmp_path)
    assert argv[argv.index("--") + 1 :] == ["-rf"]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"case_sensitive": False}, ["--ignore-case"]),
        ({"smart_case": True, "case_sensitive": False}, ["--smart-case"]),
        ({"fixed_strings": True}, ["--fixed-strings"]),
        ({"word": True}, ["--word-regexp"]),
        ({"multiline": True}, ["--multiline"]),
        ({"pcre2": True}, ["--pcre2"]),
        ({"context_lines": 2}, ["--context", "2"]),
        ({"file_types": ["py", "c"]}, ["--type", "py", "--type", "c"]),
        ({"globs": ["*.py", "!test_*"]}, ["--glob", "*.py", "--glob", "!test_*"]),
    ],
)
def test_rg_flags_follow_the_arguments(
    tmp_path: Path, arguments: dict[str, Any], expected: list[str]
) -> None:
    argv = ripgrep_argv(rg(pattern="x", **arguments), tmp_path)
    joined = " ".join(argv)
    assert " ".join(expected) in joined


def test_defaults_add_no_case_or_mode_flags(tmp_path: Path) -> None:
    argv = ripgrep_argv(rg(pattern="x", case_sensitive=True, context_lines=0), tmp_path)
    for flag in ("--ignore-case", "--smart-case", "--multiline", "--pcre2", "--context"):
        assert flag not in argv


def test_unknown_file_type_lists_the_valid_ones(tmp_path: Path) -> None:
    with pytest.raises(ArgvError) as info:
        ripgrep_argv(rg(pattern="x", file_types=["py", "golang"]), tmp_path)
    assert info.value.kind is ErrorKind.UNKNOWN_FILE_TYPE
    assert info.value.field == "arguments.file_types[1]"
    assert "'golang'" in str(info.value)
    assert "go, " in str(info.value) and "py, " in str(info.value)


def test_look_around_without_pcre2_is_refused_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ArgvError) as info:
        ripgrep_argv(rg(pattern=r"(?<=DB\.)query"), tmp_path)
    assert info.value.kind is ErrorKind.PCRE2_REQUIRED
    assert "look-behind" in str(info.value)
    assert "set `pcre2: true`" in str(info.value)


def test_fixed_strings_are_never_regexes(tmp_path: Path) -> None:
    argv = ripgrep_argv(rg(pattern="(?=x)", fixed_strings=True), tmp_path)
    assert after(argv, "--regexp") == "(?=x)"


@pytest.mark.parametrize("path", ["../x", "/etc", "a/../../b"])
def test_paths_outside_the_corpus_are_refused(tmp_path: Path, path: str) -> None:
    for call in (rg(pattern="x", paths=[path]), sg(pattern="x", language="python", paths=[path])):
        with pytest.raises(ArgvError) as info:
            tool_argv(call, tmp_path)
        assert info.value.kind is ErrorKind.PATH_OUTSIDE_CORPUS
        assert info.value.field == "arguments.paths[0]"


def test_paths_are_normalized(tmp_path: Path) -> None:
    argv = ripgrep_argv(rg(pattern="x", paths=["./src/", "b//c.py"]), tmp_path)
    assert argv[argv.index("--") + 1 :] == ["src", "b/c.py"]


def test_restrict_files_replace_the_paths(tmp_path: Path) -> None:
    argv = ripgrep_argv(rg(pattern="x", paths=["src"]), tmp_path, ["src/a.py", "src/b.py"])
    assert argv[argv.index("--") + 1 :] == ["src/a.py", "src/b.py"]
    with pytest.raises(ValueError, match="nothing to search"):
        ripgrep_argv(rg(pattern="x"), tmp_path, [])


def test_files_argv_lists_what_the_call_selects(tmp_path: Path) -> None:
    argv = ripgrep_files_argv(
        rg(pattern="x", file_types=["py"], globs=["!t*"], paths=["s"]), tmp_path
    )
    assert argv[1] == "--files"
    assert "--regexp" not in argv
    assert argv[argv.index("--") - 4 :] == ["--type", "py", "--glob", "!t*", "--", "s"]


def test_ast_grep_pattern_is_joined_to_its_flag(tmp_path: Path) -> None:
    # clap would read a separate `-$X` as an option; `--pattern=-$X` keeps it the value.
    argv = ast_grep_argv(sg(pattern="-$X", language="javascript", paths=["src"]), tmp_path)
    assert Path(argv[0]).name == "ast-grep"
    assert argv[1] == "run"
    assert joined(argv, "--pattern") == "-$X"
    assert joined(argv, "--lang") == "javascript"
    assert "-$X" not in argv and "--pattern" not in argv
    assert "--json=stream" in argv
    assert argv[argv.index("--") + 1 :] == ["src"]


def test_ast_grep_traces_the_files_it_skips(tmp_path: Path) -> None:
    # The trace is the only place ast-grep says it could not read a file (the runner reads it).
    for call in (sg(pattern="x", language="python"), sg(rule={"kind": "x"}, language="python")):
        argv = ast_grep_argv(call, tmp_path)
        assert "--inspect=entity" in argv[: argv.index("--")]


def test_ast_grep_rule_becomes_an_inline_rule_config(tmp_path: Path) -> None:
    rule = {"kind": "function_declaration", "has": {"pattern": "await $X", "stopBy": "end"}}
    argv = ast_grep_argv(sg(rule=rule, language="javascript"), tmp_path)
    assert argv[1] == "scan"
    config = json.loads(joined(argv, "--inline-rules"))
    assert config == {"id": AST_GREP_RULE_ID, "language": "javascript", "rule": rule}


def test_ast_grep_ignores_no_ignore_files_but_hidden_ones(tmp_path: Path) -> None:
    argv = ast_grep_argv(sg(pattern="x", language="python"), tmp_path)
    kinds = [argv[i + 1] for i, a in enumerate(argv) if a == "--no-ignore"]
    assert sorted(kinds) == ["dot", "exclude", "global", "parent", "vcs"]


def test_builders_refuse_the_other_tool(tmp_path: Path) -> None:
    with pytest.raises(ToolCallError, match="expected a ast_grep_search call"):
        ast_grep_argv(rg(pattern="x"), tmp_path)
