"""Shared by every test folder. Test folders mirror `codesearch_core`'s packages (tests/tools/ for
codesearch_core/tools/, ...); the helpers beside this file (store_helpers, app_support, ...) are
importable from all of them because pytest puts this folder on sys.path for its conftest."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def fixtures_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The corpus "fixtures" that `store_helpers.blueprint` names, holding its expected file, in a
    corpora folder of the test's own (CODESEARCH_CORPORA)."""
    root = tmp_path / "corpora"
    (root / "fixtures" / "src").mkdir(parents=True)
    (root / "fixtures" / "src" / "app.py").write_text("handler_1(x)\n" * 10, encoding="utf-8")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(root))
    return root
