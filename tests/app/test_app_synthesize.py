"""The Synthesize page: a templates run writes drafts into the store and shows the counts per
stage; with no corpus it still renders."""

from __future__ import annotations

from pathlib import Path

from app_support import (
    empty_install_fixture,  # noqa: F401 (a fixture)
    open_app,
    stored,
    studio_db_fixture,  # noqa: F401 (a fixture)
    texts,
)

PAGE = "pages/synthesize.py"


def test_a_run_writes_drafts_and_shows_the_stages(studio_db: Path) -> None:
    at = open_app(PAGE, reviewer="ann")
    at.selectbox(key="syn:corpus").select("webshop")
    at.number_input(key="syn:limit").set_value(3)
    at.button(key="syn:start").click().run()
    assert not at.exception, at.exception
    assert any("**3** new drafts" in t for t in texts(at, "success"))
    stages = at.dataframe[0].value
    assert list(stages["stage"]) == ["candidates", "mined", "verified", "deduplicated", "kept"]
    assert list(stages["targets"])[-1] == 3
    with stored(studio_db) as store:
        assert store.draft_counts()["pending"] == 3


def test_the_page_renders_with_no_corpus(empty_install: Path) -> None:
    at = open_app(PAGE)
    assert not at.exception
    assert not texts(at, "error")
