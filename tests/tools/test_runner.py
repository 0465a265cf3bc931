"""run_tool_call and run_plan with the real rg and ast-grep over small corpora in tmp_path."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from codesearch_core.errors import CorpusError, ErrorKind
from codesearch_core.models import Finding, Plan, PlanStep, ToolCall, ToolName
from codesearch_core.tools import binaries
from codesearch_core.tools.runner import run_plan, run_result_to_dict, run_tool_call
from codesearch_core.tools.schemas import parse_tool_call


def rg(**arguments: Any) -> ToolCall:
    return parse_tool_call({"name": "ripgrep_search", "arguments": arguments})


def sg(**arguments: Any) -> ToolCall:
    return parse_tool_call({"name": "ast_grep_search", "arguments": arguments})


def write(root: Path, rel: str, content: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    write(
        root,
        "api/db.js",
        "async function load(id) {\n"
        "  const row = await DB.query(id);\n"
        "  return row;\n"
        "}\n"
        "function count() { return DB.query('count'); }\n",
    )
    write(root, "api/util.js", "async function ping() {\n  await fetch('/ping');\n}\n")
    write(root, "api/notes.txt", "call DB.query from async code\n")
    write(root, "b.py", "import os\n# TODO: remove\ndef f():\n    return os.sep\n")
    write(root, "c/main.c", '#include <stdio.h>\nint main(void) { printf("hi"); }\n')
    return root


def spans(findings: tuple[Finding, ...]) -> list[tuple[str, int]]:
    return [(f.path, f.start_line) for f in findings]


# --- ripgrep: success ----------------------------------------------------------------------------


def test_rg_finds_matches_with_relative_paths_sorted(corpus: Path) -> None:
    result = run_tool_call(rg(pattern=r"DB\.query"), corpus)
    assert result.ok and result.error_kind is None and result.return_code == 0
    assert spans(result.findings) == [
        ("api/db.js", 2),
        ("api/db.js", 5),
        ("api/notes.txt", 1),
    ]
    first = result.findings[0]
    assert (first.start_col, first.end_col, first.text) == (21, 29, "DB.query")
    assert (corpus / "api/db.js").read_bytes()[first.byte_start : first.byte_end] == b"DB.query"
    assert result.argv[0].endswith("rg") and "--json" in result.argv


def test_rg_without_matches_is_ok_and_empty(corpus: Path) -> None:
    result = run_tool_call(rg(pattern="no such text anywhere"), corpus)
    assert result.ok and result.findings == () and result.return_code == 1


def test_findings_come_sorted_by_path_then_position(corpus: Path) -> None:
    for i in range(30):
        write(corpus, f"many/f{i:02d}.txt", "x hit\nhit hit\n")
    result = run_tool_call(rg(pattern="hit"), corpus)
    keys = [(f.path, f.byte_start) for f in result.findings]
    assert keys == sorted(keys) and len(keys) == 90


def test_file_types_and_paths_narrow_the_search(corpus: Path) -> None:
    assert spans(run_tool_call(rg(pattern="query", file_types=["js"]), corpus).findings) == [
        ("api/db.js", 2),
        ("api/db.js", 5),
    ]
    only_txt = run_tool_call(rg(pattern="query", paths=["api/notes.txt"]), corpus)
    assert spans(only_txt.findings) == [("api/notes.txt", 1)]


def test_a_pattern_that_starts_with_dashes_is_searched_for(tmp_path: Path) -> None:
    write(tmp_path, "flags.txt", "run with -v\nor with --files please\n")
    assert spans(run_tool_call(rg(pattern="-v"), tmp_path).findings) == [("flags.txt", 1)]
    result = run_tool_call(rg(pattern="--files"), tmp_path)
    assert result.ok and spans(result.findings) == [("flags.txt", 2)]


def test_a_glob_that_starts_with_a_dash_stays_a_glob(tmp_path: Path) -> None:
    # rg takes the item after `--glob` (as after `--regexp`) as its value, whatever it looks like.
    write(tmp_path, "-x.py", "foo\n")
    write(tmp_path, "a.py", "foo\n")
    result = run_tool_call(rg(pattern="foo", globs=["-*.py"]), tmp_path)
    assert result.ok, result.error
    assert spans(result.findings) == [("-x.py", 1)]


def test_look_behind_with_pcre2_runs(corpus: Path) -> None:
    result = run_tool_call(rg(pattern=r"(?<=DB\.)query", pcre2=True, file_types=["js"]), corpus)
    assert result.ok and {f.text for f in result.findings} == {"query"}
    assert result.findings[0].start_col == 24


def test_case_and_word_flags_change_what_matches(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "Error\nerror\nerrors\n")
    assert len(run_tool_call(rg(pattern="error"), tmp_path).findings) == 2
    assert len(run_tool_call(rg(pattern="error", case_sensitive=False), tmp_path).findings) == 3
    assert len(run_tool_call(rg(pattern="error", word=True), tmp_path).findings) == 1
    assert len(run_tool_call(rg(pattern="Error", smart_case=True), tmp_path).findings) == 1


def test_context_lines_do_not_become_findings(corpus: Path) -> None:
    result = run_tool_call(rg(pattern="TODO", context_lines=2), corpus)
    assert spans(result.findings) == [("b.py", 2)]


def test_multiline_match_spans_lines(tmp_path: Path) -> None:
    write(tmp_path, "m.py", "x = 1\ndef f(\n    a,\n):\n")
    result = run_tool_call(rg(pattern=r"def f\(\s*a,", multiline=True), tmp_path)
    (f,) = result.findings
    assert (f.start_line, f.start_col, f.end_line, f.end_col) == (2, 1, 3, 7)
    assert f.text == "def f(\n    a,"


def test_unicode_columns_count_characters_in_both_tools(tmp_path: Path) -> None:
    write(tmp_path, "u.py", 'label = "é"; café = 1\n')
    (by_rg,) = run_tool_call(rg(pattern="café"), tmp_path).findings
    (by_sg,) = run_tool_call(sg(pattern="café", language="python"), tmp_path).findings
    assert (by_rg.start_col, by_rg.end_col) == (14, 18)
    assert (by_sg.start_col, by_sg.end_col) == (14, 18)
    assert (by_rg.byte_start, by_rg.byte_end) == (by_sg.byte_start, by_sg.byte_end) == (14, 19)


def test_crlf_lines_match_line_anchors_and_keep_columns(tmp_path: Path) -> None:
    write(tmp_path, "w.py", "x = 1\r\nfoo(2)\r\n")
    (f,) = run_tool_call(rg(pattern=r"foo\(2\)$"), tmp_path).findings
    assert (f.start_line, f.start_col, f.end_col, f.byte_start, f.text) == (2, 1, 7, 7, "foo(2)")
    (g,) = run_tool_call(sg(pattern="foo($A)", language="python"), tmp_path).findings
    assert (g.start_line, g.start_col, g.end_col, g.byte_start) == (2, 1, 7, 7)


def test_non_utf8_content_and_file_names_are_found(tmp_path: Path) -> None:
    os.makedirs(tmp_path, exist_ok=True)
    (tmp_path / os.fsdecode(b"lat\xe9.txt")).write_bytes(b"caf\xe9 = 1; cafe = 2\n")
    findings = run_tool_call(rg(pattern="caf"), tmp_path).findings
    assert [(f.path, f.start_col, f.end_col, f.byte_start) for f in findings] == [
        ("lat\ufffd.txt", 1, 4, 0),
        # the Latin-1 é is one undecodable byte: one replacement character, one column
        ("lat\ufffd.txt", 11, 14, 10),
    ]


def test_ignore_files_do_not_hide_files_but_hidden_files_stay_hidden(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "ignored.py\n")
    write(tmp_path, ".ignore", "also.py\n")
    write(tmp_path, "ignored.py", "marker = 1\n")
    write(tmp_path, "also.py", "marker = 2\n")
    write(tmp_path, ".hidden/h.py", "marker = 3\n")
    (tmp_path / ".git").mkdir()
    expected = ["also.py", "ignored.py"]
    assert sorted(f.path for f in run_tool_call(rg(pattern="marker"), tmp_path).findings) == (
        expected
    )
    by_sg = run_tool_call(sg(pattern="marker = $N", language="python"), tmp_path).findings
    assert sorted(f.path for f in by_sg) == expected


# --- ripgrep: errors -----------------------------------------------------------------------------


def test_invalid_regex_is_an_invalid_pattern_error(corpus: Path) -> None:
    result = run_tool_call(rg(pattern="foo(bar"), corpus)
    assert not result.ok and result.error_kind is ErrorKind.INVALID_PATTERN
    assert "unclosed group" in result.error
    assert result.return_code == 2


def test_look_around_without_pcre2_fails_before_running(corpus: Path) -> None:
    result = run_tool_call(rg(pattern=r"(?<=DB\.)query"), corpus)
    assert not result.ok and result.error_kind is ErrorKind.PCRE2_REQUIRED
    assert "pcre2" in result.error
    assert result.argv == () and result.return_code is None  # nothing ran


def test_back_reference_without_pcre2_fails_before_running(corpus: Path) -> None:
    result = run_tool_call(rg(pattern=r"(\w+) \1"), corpus)
    assert result.error_kind is ErrorKind.PCRE2_REQUIRED and result.argv == ()


def test_unknown_file_type_lists_valid_types(corpus: Path) -> None:
    result = run_tool_call(rg(pattern="x", file_types=["python3"]), corpus)
    assert not result.ok and result.error_kind is ErrorKind.UNKNOWN_FILE_TYPE
    assert "'python3'" in result.error and "py, " in result.error


@pytest.mark.parametrize("path", ["..", "../outside", "/etc", "api/../../x"])
def test_paths_leaving_the_corpus_are_refused(corpus: Path, path: str) -> None:
    for call in (rg(pattern="x", paths=[path]), sg(pattern="x", language="python", paths=[path])):
        result = run_tool_call(call, corpus)
        assert not result.ok and result.error_kind is ErrorKind.PATH_OUTSIDE_CORPUS
        assert repr(path) in result.error


def test_a_symlink_out_of_the_corpus_is_refused(corpus: Path, tmp_path: Path) -> None:
    write(tmp_path, "secret/key.txt", "DB.query secret\n")
    os.symlink(tmp_path / "secret", corpus / "escape")
    result = run_tool_call(rg(pattern="secret", paths=["escape"]), corpus)
    assert result.error_kind is ErrorKind.PATH_OUTSIDE_CORPUS and result.findings == ()
    # Walking the corpus does not follow the link either.
    assert run_tool_call(rg(pattern="secret"), corpus).findings == ()


def test_a_missing_path_is_an_error_that_keeps_the_other_findings(corpus: Path) -> None:
    result = run_tool_call(rg(pattern=r"DB\.query", paths=["api/db.js", "api/gone.js"]), corpus)
    assert not result.ok and result.error_kind is ErrorKind.TOOL_ERROR
    assert result.return_code == 2
    assert "api/gone.js" in result.error
    assert spans(result.findings) == [("api/db.js", 2), ("api/db.js", 5)]


def test_catastrophic_backtracking_is_an_error_not_a_success(tmp_path: Path) -> None:
    write(tmp_path, "big.txt", "a" * 50_000 + "b\n")
    result = run_tool_call(rg(pattern="(a+)+$", pcre2=True), tmp_path, timeout_s=5)
    assert not result.ok and result.findings == ()
    assert result.error_kind in (ErrorKind.TOOL_ERROR, ErrorKind.TIMEOUT)
    if result.error_kind is ErrorKind.TOOL_ERROR:  # rg's PCRE2 gives up by itself
        assert "limit" in result.error


def test_a_search_past_the_timeout_is_killed(tmp_path: Path) -> None:
    # Reading a FIFO that nobody writes blocks forever: a search that can never finish.
    os.mkfifo(tmp_path / "stuck.txt")
    result = run_tool_call(rg(pattern="x", paths=["stuck.txt"]), tmp_path, timeout_s=0.3)
    assert not result.ok and result.error_kind is ErrorKind.TIMEOUT
    assert "0.3 s" in result.error
    assert result.return_code is not None and result.return_code < 0  # killed by a signal


def test_max_findings_truncates_and_stops_the_tool(tmp_path: Path) -> None:
    write(tmp_path, "many.txt", "hit\n" * 200)
    result = run_tool_call(rg(pattern="hit"), tmp_path, max_findings=10)
    assert result.ok and result.truncated and len(result.findings) == 10
    assert result.return_code is not None  # stopped and waited for
    exact = run_tool_call(rg(pattern="hit"), tmp_path, max_findings=200)
    assert exact.ok and not exact.truncated and len(exact.findings) == 200


def test_a_missing_tool_is_reported_not_raised(
    corpus: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    binaries.clear_caches()
    monkeypatch.setenv("CODESEARCH_RG", str(tmp_path / "no-rg"))
    try:
        result = run_tool_call(rg(pattern="x"), corpus)
    finally:
        binaries.clear_caches()
    assert not result.ok and result.error_kind is ErrorKind.TOOL_NOT_FOUND
    assert "CODESEARCH_RG" in result.error


@pytest.mark.parametrize("text", ["fo\x00o", "fo\ud800o"], ids=["NUL", "lone surrogate"])
def test_a_call_that_skipped_the_schema_and_cannot_be_passed_is_a_failed_run(
    tmp_path: Path, text: str
) -> None:
    # parse_tool_call refuses both; a call built by hand reaches Popen, which cannot pass them.
    write(tmp_path, "a.py", "foo(1)\n")
    calls = [
        (ToolCall(ToolName.RIPGREP, {"pattern": text}), None),
        (ToolCall(ToolName.AST_GREP, {"pattern": text, "language": "python"}), None),
        # Narrowing to restrict_files runs `rg --files` with the globs first.
        (ToolCall(ToolName.RIPGREP, {"pattern": "foo", "globs": [text]}), ["a.py"]),
    ]
    for call, restrict in calls:
        result = run_tool_call(call, tmp_path, restrict_files=restrict)
        assert not result.ok and result.error_kind is ErrorKind.INVALID_CALL
        assert "could not start" in result.error and "parse_tool_call" in result.error


def test_a_missing_corpus_root_raises(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="not a directory"):
        run_tool_call(rg(pattern="x"), tmp_path / "nope")


# --- ast-grep ------------------------------------------------------------------------------------


def test_ast_grep_pattern_finds_structure_not_text(corpus: Path) -> None:
    result = run_tool_call(sg(pattern="await $X", language="javascript"), corpus)
    assert result.ok and result.return_code == 0
    assert spans(result.findings) == [("api/db.js", 2), ("api/util.js", 2)]
    first = result.findings[0]
    assert (first.start_col, first.end_col, first.text) == (15, 33, "await DB.query(id)")
    assert first.language == "javascript"


def test_ast_grep_without_matches_is_ok(corpus: Path) -> None:
    result = run_tool_call(sg(pattern="yield $X", language="javascript"), corpus)
    assert result.ok and result.findings == () and result.return_code == 1


def test_ast_grep_rule_with_has_and_stop_by_end(corpus: Path) -> None:
    rule = {"kind": "function_declaration", "has": {"pattern": "await $X", "stopBy": "end"}}
    result = run_tool_call(sg(rule=rule, language="javascript"), corpus)
    assert result.ok
    assert [(f.path, f.start_line, f.end_line) for f in result.findings] == [
        ("api/db.js", 1, 4),
        ("api/util.js", 1, 3),
    ]


def test_ast_grep_unparsable_pattern_is_an_invalid_pattern(corpus: Path) -> None:
    result = run_tool_call(sg(pattern="foo(", language="javascript"), corpus)
    assert not result.ok and result.error_kind is ErrorKind.INVALID_PATTERN
    assert "ERROR node" in result.error


def test_ast_grep_rule_with_unknown_kind_is_an_invalid_pattern(corpus: Path) -> None:
    result = run_tool_call(sg(rule={"kind": "no_such_kind"}, language="javascript"), corpus)
    assert not result.ok and result.error_kind is ErrorKind.INVALID_PATTERN
    assert "no_such_kind" in result.error


def test_an_unknown_language_that_slipped_past_the_schema_is_named(corpus: Path) -> None:
    call = ToolCall(ToolName.AST_GREP, {"pattern": "x", "language": "klingon"})
    result = run_tool_call(call, corpus)
    assert not result.ok and result.error_kind is ErrorKind.UNKNOWN_LANGUAGE
    assert "'klingon'" in result.error


def test_ast_grep_missing_path_is_a_tool_error(corpus: Path) -> None:
    call = sg(pattern="await $X", language="javascript", paths=["api/db.js", "gone.js"])
    result = run_tool_call(call, corpus)
    assert not result.ok and result.error_kind is ErrorKind.TOOL_ERROR
    assert "gone.js" in result.error
    assert spans(result.findings) == [("api/db.js", 2)]


def test_ast_grep_reports_a_named_fifo_it_skips_and_keeps_the_rest(tmp_path: Path) -> None:
    # ast-grep skips a named FIFO or socket without a word (exit 0): the runner names it.
    # (Unreadable files: tests/tools/test_hostile_calls.py, which needs dropped capabilities as root.)
    os.mkfifo(tmp_path / "pipe.py")
    write(tmp_path, "a.py", "foo(1)\n")
    result = run_tool_call(
        sg(pattern="foo($A)", language="python", paths=["pipe.py", "a.py"]), tmp_path
    )
    assert not result.ok and result.error_kind is ErrorKind.TOOL_ERROR
    assert "pipe.py (a FIFO, not a file or directory)" in result.error
    assert spans(result.findings) == [("a.py", 1)]


def test_ast_grep_trace_is_read_not_kept(tmp_path: Path) -> None:
    # Files ast-grep skips on purpose (empty, not UTF-8) are no error, and the trace that names
    # them (`--inspect=entity`) stays out of the stored stderr.
    write(tmp_path, "empty.py", "")
    write(tmp_path, "latin.py", b"s = 'caf\xe9'\n")
    write(tmp_path, "a.py", "foo(1)\n")
    result = run_tool_call(sg(pattern="foo($A)", language="python"), tmp_path)
    assert result.ok, result.error
    assert result.stderr == "" and spans(result.findings) == [("a.py", 1)]


# --- restriction and plans -----------------------------------------------------------------------


def test_restrict_files_limits_the_search(corpus: Path) -> None:
    call = sg(pattern="await $X", language="javascript")
    result = run_tool_call(call, corpus, restrict_files=["api/util.js"])
    assert spans(result.findings) == [("api/util.js", 2)]


def test_restrict_files_still_obey_the_calls_types_and_paths(corpus: Path) -> None:
    files = ["api/db.js", "api/notes.txt", "b.py"]
    typed = run_tool_call(rg(pattern="DB", file_types=["js"]), corpus, restrict_files=files)
    assert {f.path for f in typed.findings} == {"api/db.js"}
    scoped = run_tool_call(rg(pattern="o", paths=["api"]), corpus, restrict_files=files)
    assert {f.path for f in scoped.findings} == {"api/db.js", "api/notes.txt"}


def test_empty_restriction_runs_nothing(corpus: Path) -> None:
    result = run_tool_call(rg(pattern="x", file_types=["c"]), corpus, restrict_files=["b.py"])
    assert result.ok and result.findings == () and result.argv == ()


def test_plan_narrows_with_rg_then_confirms_with_ast_grep(corpus: Path) -> None:
    plan = Plan(
        (
            PlanStep(rg(pattern=r"DB\.query")),
            PlanStep(sg(pattern="await $X", language="javascript"), restrict_to_previous=True),
        )
    )
    result = run_plan(plan, corpus)
    assert result.ok and len(result.steps) == 2
    # util.js has an await but no DB.query, so step 2 never searched it.
    assert spans(result.findings) == [("api/db.js", 2)]
    assert result.findings == result.steps[1].findings
    assert "api/db.js" in result.steps[1].argv and "api/util.js" not in result.steps[1].argv


def test_plan_step_without_previous_files_finds_nothing(corpus: Path) -> None:
    plan = Plan(
        (
            PlanStep(rg(pattern="nowhere to be found")),
            PlanStep(sg(pattern="await $X", language="javascript"), restrict_to_previous=True),
        )
    )
    result = run_plan(plan, corpus)
    assert result.ok and result.findings == ()
    assert result.steps[1].argv == ()


def test_a_failing_step_ends_the_plan_with_its_error(corpus: Path) -> None:
    plan = Plan(
        (
            PlanStep(rg(pattern="foo(")),
            PlanStep(sg(pattern="await $X", language="javascript"), restrict_to_previous=True),
        )
    )
    result = run_plan(plan, corpus)
    assert not result.ok and result.error_kind is ErrorKind.INVALID_PATTERN
    assert result.error.startswith("step 1 of 2: ")
    assert len(result.steps) == 1


def test_result_to_dict_is_json_ready(corpus: Path) -> None:
    d = run_result_to_dict(run_tool_call(rg(pattern="TODO"), corpus))
    assert d["ok"] is True and d["error_kind"] is None
    assert d["findings"][0]["path"] == "b.py" and d["findings"][0]["start_line"] == 2


def test_a_run_does_not_inherit_the_stderr_of_the_run_before(corpus: Path) -> None:
    # Each thread reuses one stderr file (tools.process._Files); what a failing run wrote there
    # must be gone for the next, whether that one writes nothing (rg) or a trace (ast-grep).
    failed = run_tool_call(rg(pattern="x", paths=["missing.txt"]), corpus)
    assert not failed.ok and "missing.txt" in failed.stderr
    clean = run_tool_call(rg(pattern="DB", paths=["api"]), corpus)
    assert clean.ok and clean.stderr == ""
    run_tool_call(rg(pattern="x", paths=["missing.txt"]), corpus)
    traced = run_tool_call(sg(pattern="DB.query($A)", language="javascript"), corpus)
    assert traced.ok and traced.stderr == "" and len(traced.findings) == 2
    again = run_tool_call(rg(pattern="DB", paths=["api"]), corpus)
    assert again.stderr == ""
