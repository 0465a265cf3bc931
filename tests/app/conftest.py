"""Fixtures of the app's tests: AppTest stores (tests/app_support.py has the helpers) and the
browser tests' studio and Chromium (tests/browser_support.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from app_support import build_reviewable, release_app_store
from browser_support import (
    SharedStudio,
    Studio,
    browser_fixture,
    shared_studio_fixture,
    start_studio_fixture,
)
from playwright.sync_api import Browser


@pytest.fixture(scope="session")
def shared_studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedStudio]:
    """One studio server for the session's browser tests; each gets it with its own store."""
    yield from shared_studio_fixture(tmp_path_factory.mktemp("shared-studio"))


@pytest.fixture
def start_studio(tmp_path: Path, shared_studio: SharedStudio) -> Iterator[Callable[..., Studio]]:
    yield from start_studio_fixture(tmp_path, shared_studio)


@pytest.fixture(scope="session")
def chromium() -> Iterator[Browser]:
    yield from browser_fixture()


@pytest.fixture
def browser(chromium: Browser) -> Iterator[Browser]:
    """One Chromium for the session (a launch costs a second or two per test); each test's pages
    are new contexts, closed after it."""
    yield chromium
    for context in chromium.contexts:
        context.close()


@pytest.fixture(name="studio_db")
def studio_db_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temp store with the shipped corpora and seeds (what a first start gets)."""
    db = tmp_path / "studio.duckdb"
    monkeypatch.setenv("CODESEARCH_DB", str(db))
    release_app_store()
    yield db
    release_app_store()


@pytest.fixture(name="empty_install")
def empty_install_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No corpora, no seeds, a new store: everything the app lists is empty."""
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("CODESEARCH_DATA", str(data))
    monkeypatch.setenv("CODESEARCH_DB", str(tmp_path / "studio.duckdb"))
    release_app_store()
    yield data
    release_app_store()


@pytest.fixture(name="reviewable_template", scope="session")
def reviewable_template_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once per session: the seeds plus executed, graded mutations of the ledger corpus."""
    db = tmp_path_factory.mktemp("template") / "studio.duckdb"
    build_reviewable(db)
    return db
