"""Every page of the app renders without an exception: on an empty installation, on a first start,
and on a store with proposals and decisions."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_support import (
    PAGES,
    open_app,
    seed_reviewable,
    stored,
    texts,
)
from store_holder import store_held_elsewhere

from codesearch_core.models import DecisionAction
from codesearch_core.store import PROPOSAL


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_on_an_empty_installation(empty_install: Path, page: str) -> None:
    at = open_app(page)
    assert not at.exception
    assert not any("Traceback" in t for t in texts(at, "markdown"))


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_on_first_start(studio_db: Path, page: str) -> None:
    at = open_app(page)
    assert not at.exception
    assert not texts(at, "error")


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_on_a_store_with_decisions(
    studio_db: Path, reviewable_template: Path, page: str
) -> None:
    queue = seed_reviewable(studio_db, reviewable_template)
    with stored(studio_db) as store:
        store.queue(PROPOSAL).decide(queue[0], DecisionAction.ACCEPT, "ann")
        store.queue(PROPOSAL).decide(
            queue[1], DecisionAction.REJECT, "ann", reason="finds too much"
        )
        store.queue(PROPOSAL).decide(queue[2], DecisionAction.SKIP, "bob")
    at = open_app(page, reviewer="ann")
    assert not at.exception
    # The card may show its item's failed run ("**invalid_pattern**: ..."); nothing else may fail.
    assert not [e for e in texts(at, "error") if not e.startswith("**")]


def test_first_start_loads_the_seeds_into_a_new_store(studio_db: Path) -> None:
    at = open_app()
    blueprints = next(m for m in at.metric if m.label == "Blueprints")
    with stored(studio_db) as store:
        count = store.counts().blueprints
    assert count >= 30 and blueprints.value == f"{count:,}"


def test_the_sidebar_shows_store_corpus_engine_and_reviewer_on_every_page(studio_db: Path) -> None:
    for page in PAGES:
        at = open_app(page, reviewer="ann")
        sidebar = at.sidebar
        assert sidebar.text_input(key="reviewer").value == "ann"
        corpus = sidebar.selectbox(key="corpus")
        assert corpus.value == corpus.options[0] and "webshop" in corpus.options
        captions = " ".join(str(c.value) for c in sidebar.caption)
        assert "Engine" in captions and str(studio_db) in captions


def test_a_store_locked_by_another_process_is_a_message_not_a_traceback(
    studio_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODESEARCH_LOCK_WAIT", "0.5")
    with store_held_elsewhere(studio_db, idle_release_s=None) as holder:  # as a long verify run
        at = open_app("pages/review.py")
        assert not at.exception
        assert any(
            "cannot be opened" in e and f"in use by process {holder.pid}" in e
            for e in texts(at, "error")
        )
