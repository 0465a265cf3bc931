"""`read_file`: numbered as rg numbers lines, bounded, refusing what is not a corpus text file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codesearch_core.gym.actions import ActionError, ReadRequest
from codesearch_core.gym.files import read_lines


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "c"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text(
        "".join(f"line {i}\n" for i in range(1, 501)), encoding="utf-8"
    )
    (root / "src" / "ff.txt").write_bytes(
        "one\x0ctwo\nthree\u2028four\nfive".encode()
    )  # no newline at the end
    (root / "blob.bin").write_bytes(b"\x7fELF\x00\x00binary")
    (root / "long.min.js").write_bytes(b"var a=1;" * 1_000_000 + b"\nsecond\n")
    return root


def test_lines_are_numbered_from_the_start_line(corpus: Path) -> None:
    text = read_lines(corpus, ReadRequest("src/a.py", 10, 12))
    assert text == "src/a.py:10-12\n10: line 10\n11: line 11\n12: line 12"


def test_at_most_200_lines_a_call_and_says_so(corpus: Path) -> None:
    text = read_lines(corpus, ReadRequest("src/a.py", 1, 500))
    assert isinstance(text, str)
    lines = text.splitlines()
    assert lines[0] == "src/a.py:1-200 (at most 200 lines a call)"
    assert len(lines) == 201 and lines[-1] == "200: line 200"


def test_lines_are_counted_at_newlines_only_as_rg_counts_them(corpus: Path) -> None:
    text = read_lines(corpus, ReadRequest("src/ff.txt", 1, 10))
    assert isinstance(text, str)
    body = text.split("\n")[1:]
    assert [b.split(":")[0] for b in body] == ["1", "2", "3"]
    assert body[2] == "3: five"
    assert "the file ends at line 3" in text.split("\n")[0]


def test_a_long_minified_line_is_clipped_and_the_next_line_keeps_its_number(corpus: Path) -> None:
    text = read_lines(corpus, ReadRequest("long.min.js", 1, 2))
    assert isinstance(text, str)
    first, second = text.split("\n")[1:]
    assert len(first) < 300 and first.endswith("…")
    assert second == "2: second"


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("blob.bin", "binary_file"),
        ("../outside.txt", "path_outside_corpus"),
        ("/etc/passwd", "path_outside_corpus"),
        ("src", "not_a_file"),
        ("src/missing.py", "not_a_file"),
    ],
)
def test_refused_with_a_reason(corpus: Path, path: str, kind: str) -> None:
    got = read_lines(corpus, ReadRequest(path, 1, 5))
    assert isinstance(got, ActionError)
    assert got.kind == kind and got.message


def test_a_symlink_out_of_the_corpus_is_refused(corpus: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("token\n", encoding="utf-8")
    os.symlink(secret, corpus / "src" / "link.txt")
    got = read_lines(corpus, ReadRequest("src/link.txt", 1, 5))
    assert isinstance(got, ActionError) and got.kind == "path_outside_corpus"


def test_a_start_past_the_end_says_how_long_the_file_is(corpus: Path) -> None:
    got = read_lines(corpus, ReadRequest("src/a.py", 900, 910))
    assert isinstance(got, ActionError) and "(500 lines)" in got.message
