"""Bounded line reading shared by the importers."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesearch_core.corpora.jsonl_lines import (
    MAX_LINE_BYTES,
    bounded_lines,
    line_too_long,
    open_jsonl,
)
from codesearch_core.errors import InputFileError


def test_lines_come_numbered_and_a_too_long_one_is_none_without_losing_the_next(
    tmp_path: Path,
) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b'{"a": 1}\n' + b"x" * (3 * MAX_LINE_BYTES) + b'\n{"b": 2}')
    with open_jsonl(path) as handle:
        assert list(bounded_lines(handle)) == [(1, b'{"a": 1}\n'), (2, None), (3, b'{"b": 2}')]


def test_a_line_of_exactly_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"y" * MAX_LINE_BYTES + b"\n")
    with open_jsonl(path) as handle:
        [(number, line)] = list(bounded_lines(handle))
    assert number == 1 and line is not None and len(line) == MAX_LINE_BYTES + 1


@pytest.mark.parametrize(
    ("make", "says"), [("missing", "file not found"), ("dir", "is a directory")]
)
def test_files_that_cannot_be_read_say_why(tmp_path: Path, make: str, says: str) -> None:
    path = tmp_path / "x"
    if make == "dir":
        path.mkdir()
    with pytest.raises(InputFileError, match=says) as info:
        open_jsonl(path)
    assert info.value.source == str(path)


def test_too_long_names_the_record_and_the_line() -> None:
    err = line_too_long("blueprint", source="b.jsonl", line=7)
    assert str(err).startswith("b.jsonl:7: line longer than 1,048,576 bytes: one blueprint")
