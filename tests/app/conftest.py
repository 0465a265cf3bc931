"""Fixtures of the browser tests (tests/browser_support.py has the helpers)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from browser_support import Studio, browser_fixture, start_studio_fixture
from playwright.sync_api import Browser


@pytest.fixture
def start_studio(tmp_path: Path) -> Iterator[Callable[..., Studio]]:
    yield from start_studio_fixture(tmp_path)


@pytest.fixture
def browser() -> Iterator[Browser]:
    yield from browser_fixture()
