"""The Corpus page's corpus management, walked with AppTest: adding a corpus from a folder (with
its errors), the snapshot line, a hand edit named on the page, and a file too large to show whole."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from app_support import open_app, texts

from codesearch_core import config

CORPUS = "pages/corpus.py"


@pytest.fixture
def own_corpora(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A corpora folder of the test's own, holding a copy of the shipped `ledger`."""
    root = tmp_path / "corpora"
    root.mkdir()
    shutil.copytree(config.corpora_dir() / "ledger", root / "ledger")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(root))
    return root


def _source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    (src / "app").mkdir(parents=True)
    (src / "app" / "main.py").write_text("def main():\n    print('hi')\n", encoding="utf-8")
    (src / "app" / "bundle.min.js").write_text("var a=1;" * 700_000 + "\n", encoding="utf-8")
    return src


def test_add_a_corpus_from_the_page_then_see_a_hand_edit(
    studio_db: Path, own_corpora: Path, tmp_path: Path
) -> None:
    src = _source(tmp_path)
    at = open_app(CORPUS)
    at.text_input(key="add_corpus_name").input("mine")
    at.text_input(key="add_corpus_source").input(str(tmp_path / "missing"))
    next(b for b in at.button if b.label == "Add").click().run()
    assert any("Not added" in e and "no such directory" in e for e in texts(at, "error"))
    assert not (own_corpora / "mine").exists()

    # Inside a form, typed values travel with the submit: type, then submit, in one run.
    at.text_input(key="add_corpus_source").input(str(src))
    next(b for b in at.button if b.label == "Add").click().run()
    assert not at.exception
    assert any(s.startswith("Added **mine**: 2 files") for s in texts(at, "success"))
    assert at.sidebar.selectbox(key="corpus").value == "mine"  # the new corpus is open
    captions = " ".join(c.value for c in at.caption)
    assert "**mine** · 2 files" in captions and "snapshot `" in captions
    assert not texts(at, "warning")

    # The 5.6 MB bundle is shown in part, with a notice.
    at.session_state["corpus_open_file"] = "app/bundle.min.js"
    at.run()
    assert any("Too large to show whole" in i for i in texts(at, "info"))

    # A hand edit, after pinning: the page names the file once it checks again.
    main_py = own_corpora / "mine" / "app" / "main.py"
    os.chmod(main_py, 0o644)
    main_py.write_text("def main():\n    print('bye')\n", encoding="utf-8")
    next(b for b in at.button if b.label == "Check now").click().run()
    warning = " ".join(texts(at, "warning"))
    assert "Edited since it was pinned" in warning and "changed  app/main.py" in warning


def test_an_unpinned_corpus_says_so(studio_db: Path, own_corpora: Path) -> None:
    (own_corpora / "ledger" / ".codesearch-manifest.json").unlink()
    at = open_app(CORPUS)
    at.sidebar.selectbox(key="corpus").set_value("ledger").run()
    assert any("has no manifest" in i for i in texts(at, "info"))


def test_the_page_names_blueprints_written_against_another_snapshot(
    studio_db: Path, own_corpora: Path
) -> None:
    at = open_app(CORPUS)
    at.sidebar.selectbox(key="corpus").set_value("ledger").run()
    assert not any("written against another snapshot" in w for w in texts(at, "warning"))
    some = sorted((own_corpora / "ledger").rglob("*.java"))[0]
    os.chmod(some, 0o644)
    some.write_text(some.read_text(encoding="utf-8") + "\n// edited\n", encoding="utf-8")
    next(b for b in at.button if b.label == "Check now").click().run()
    warnings = " ".join(texts(at, "warning"))
    assert "Edited since it was pinned" in warnings
    assert "blueprint(s)** of this corpus were written against another snapshot" in warnings
    assert "`ledger-" in warnings  # the shipped ledger seeds, by id
