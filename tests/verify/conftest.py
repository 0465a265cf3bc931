"""Fixtures of the verify tests: a one-file corpus written here (`corpus`), where `handler` is
defined, mentioned in a comment and a string, and called once over three lines."""

from __future__ import annotations

from pathlib import Path

import pytest

SOURCE = """\
def handler(x):
    # handler is logged, not called, here
    print("handler", x)
    return x


def main():
    handler(
        1,
    )
"""


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Corpus `tiny` (`app.py`: `SOURCE`), the corpora folder pointed at it; its root."""
    root = tmp_path / "corpora" / "tiny"
    root.mkdir(parents=True)
    (root / "app.py").write_text(SOURCE, encoding="utf-8")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path / "corpora"))
    return root
