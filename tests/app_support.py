"""Shared set-up for the app's AppTest tests: a temp store per test, fresh Streamlit caches, a
store with reviewable items, and opening a page as a curator would.

The fixtures that use them (`studio_db`, `empty_install`, `reviewable_template`) are in
`tests/app/conftest.py`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

from codesearch_core import ingest, studio
from codesearch_core.engines.mutations import MutationEngine
from codesearch_core.store.core import Store
from codesearch_core.store.types import BlueprintFilters
from codesearch_core.verify.pending import verify_pending

APP = Path(__file__).resolve().parent.parent / "app.py"
#: Script runs that execute tools or build exports take longer than AppTest's 3 s default.
TIMEOUT_S = 60

PAGES = (
    "pages/overview.py",
    "pages/corpus.py",
    "pages/blueprints.py",
    "pages/propose.py",
    "pages/review.py",
    "pages/export.py",
    "pages/audit.py",
)


def release_app_store() -> None:
    """Close the store the app cached (its `on_release`), so the test may open the file itself."""
    st.cache_resource.clear()
    st.cache_data.clear()


def build_reviewable(db: Path) -> None:
    with Store(db) as store:
        ingest.ensure_seeded(store)
        blueprints = studio.all_blueprints(store, BlueprintFilters(corpus="ledger"), limit=1000)
        studio.propose_into_store(store, MutationEngine(), blueprints, n=2)
        verify_pending(store, workers=1)


def seed_reviewable(db: Path, template: Path) -> list[str]:
    """Copy the reviewable template to `db`; the review queue's ids in order."""
    release_app_store()
    shutil.copyfile(template, db)
    with Store(db) as store:
        return [i.proposal_id for i in store.review_queue(limit=10_000).items]


def open_app(page: str | None = None, *, reviewer: str | None = None) -> AppTest:
    """The app, run once, then switched to `page`; the reviewer typed into the sidebar."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S).run()
    assert not at.exception, at.exception
    if page is not None:
        at.switch_page(page).run()
        assert not at.exception, at.exception
    if reviewer is not None:
        at.text_input(key="reviewer").input(reviewer).run()
        assert not at.exception, at.exception
    return at


def stored(db: Path) -> Store:
    """The store file, opened by the test after the app let go of it."""
    release_app_store()
    return Store(db)


def texts(at: AppTest, kind: str) -> list[str]:
    """The texts of every element of one kind (`error`, `success`, `markdown`, ...)."""
    return [str(e.value) for e in getattr(at, kind)]
