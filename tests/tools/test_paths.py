"""Paths named by a call must stay inside the corpus."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codesearch_core.errors import CorpusError
from codesearch_core.tools.paths import corpus_relative, resolve_in_corpus


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\n")
    (tmp_path / "secret.txt").write_text("password\n")
    return root


def test_a_relative_path_resolves_inside(corpus: Path) -> None:
    assert resolve_in_corpus(corpus, "src/a.py") == (corpus / "src" / "a.py").resolve()
    assert resolve_in_corpus(corpus, ".") == corpus.resolve()


def test_a_missing_path_inside_is_not_our_business(corpus: Path) -> None:
    assert resolve_in_corpus(corpus, "src/nope.py") == (corpus / "src" / "nope.py").resolve()


@pytest.mark.parametrize(
    ("rel", "message"),
    [
        ("/etc/passwd", "is absolute"),
        ("../secret.txt", "contains `..`"),
        ("src/../../secret.txt", "contains `..`"),
        ("src/..", "contains `..`"),
        ("src/a\x00.py", "NUL byte"),
        ("", "empty path"),
    ],
)
def test_paths_that_leave_the_corpus_are_refused(corpus: Path, rel: str, message: str) -> None:
    with pytest.raises(CorpusError, match=message):
        resolve_in_corpus(corpus, rel)


def test_a_symlink_escaping_the_corpus_is_refused(corpus: Path) -> None:
    os.symlink(corpus.parent / "secret.txt", corpus / "link.txt")
    os.symlink(corpus.parent, corpus / "up")
    with pytest.raises(CorpusError, match=r"'link.txt' leads outside the corpus"):
        resolve_in_corpus(corpus, "link.txt")
    with pytest.raises(CorpusError, match="leads outside the corpus"):
        resolve_in_corpus(corpus, "up/secret.txt")


def test_a_symlink_staying_inside_is_allowed(corpus: Path) -> None:
    os.symlink(corpus / "src", corpus / "alias")
    assert resolve_in_corpus(corpus, "alias/a.py") == (corpus / "src" / "a.py").resolve()


def test_a_corpus_root_reached_through_a_symlink_works(corpus: Path, tmp_path: Path) -> None:
    os.symlink(corpus, tmp_path / "via-link")
    assert resolve_in_corpus(tmp_path / "via-link", "src/a.py").name == "a.py"


def test_corpus_relative_normalizes_what_the_tool_receives(corpus: Path) -> None:
    assert corpus_relative(corpus, "./src//a.py") == "src/a.py"
    assert corpus_relative(corpus, "src/") == "src"
    assert corpus_relative(corpus, "./") == "."
    with pytest.raises(CorpusError):
        corpus_relative(corpus, "../x")


@pytest.mark.parametrize(
    "rel", ["a", "./a", "a//b", "a/./b/", ".", "./", "a/b/c.py", ".hidden/x", "a.b/./c", "é/ü"]
)
def test_corpus_relative_reads_a_path_as_pathlib_does(corpus: Path, rel: str) -> None:
    from pathlib import PurePosixPath

    parts = [p for p in PurePosixPath(rel).parts if p != "."]
    assert corpus_relative(corpus, rel) == ("/".join(parts) or ".")


def test_a_sibling_sharing_the_root_name_as_prefix_is_outside(corpus: Path) -> None:
    # `/x/corpus-evil` starts with `/x/corpus`: the containment check compares whole components.
    evil = corpus.parent / (corpus.name + "-evil")
    evil.mkdir()
    os.symlink(evil, corpus / "sib")
    with pytest.raises(CorpusError, match="leads outside the corpus"):
        corpus_relative(corpus, "sib")
