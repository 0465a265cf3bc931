"""`rg_occurrences`: many patterns in one real rg pass, read back as (path, line, text)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesearch_core.errors import CodesearchError
from codesearch_core.tools import rg_occurrences
from codesearch_core.tools.occurrences import parse_occurrences


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text(
        "db.query(1)\nx = (client\n    .get(2))\n# DB.QUERY in a comment\n", encoding="utf-8"
    )
    (tmp_path / "notes.md").write_text("db.query( in prose\n", encoding="utf-8")
    return tmp_path


def test_every_pattern_in_one_pass_with_its_path_and_line(corpus: Path) -> None:
    found = rg_occurrences(["db.query", "DB.QUERY"], corpus, fixed_strings=True)
    assert sorted(found) == [
        ("notes.md", 1, "db.query"), ("src/a.py", 1, "db.query"), ("src/a.py", 4, "DB.QUERY"),
    ]  # fmt: skip


def test_a_group_replaces_the_match_and_a_multiline_match_is_one_record(corpus: Path) -> None:
    callee = r"([a-z]+(?:[ \t\n]*\.[a-z]+)*)[ \t]*\("
    found = rg_occurrences([callee], corpus, replace="$1", multiline=True, file_types=("py",))
    assert found == [("src/a.py", 1, "db.query"), ("src/a.py", 2, "client\n    .get")]


def test_case_and_globs_are_the_callers(corpus: Path) -> None:
    found = rg_occurrences(["db.query"], corpus, fixed_strings=True, ignore_case=True,
                           globs=("*.py",))  # fmt: skip
    assert [(p, line) for p, line, _ in found] == [("src/a.py", 1), ("src/a.py", 4)]
    assert rg_occurrences([], corpus) == []


def test_a_regex_rg_refuses_is_an_error_that_says_so(corpus: Path) -> None:
    with pytest.raises(CodesearchError, match="rg exited 2"):
        rg_occurrences(["(unclosed"], corpus)


def test_the_parser_takes_each_lines_prefix_off_a_multiline_record() -> None:
    out = "./a.py\x0012:first\n./a.py\x0013:  second\x1e\nb.py\x001:x\x1e\n"
    assert parse_occurrences(out) == [("a.py", 12, "first\n  second"), ("b.py", 1, "x")]
