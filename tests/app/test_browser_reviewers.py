"""The studio as reviewers live in it (issue 29), walked in a real browser: one server for the
whole file (a start is the slowest step under load), each test on its own page and its own
reviewer name so the tests do not lean on each other's state.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from browser_support import (
    CHROMIUM,
    UI_TIMEOUT_MS,
    Studio,
    browser_fixture,
    open_page,
    settle,
    start_studio_fixture,
)
from playwright.sync_api import Browser, Page, expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="needs Debian's Chromium at /usr/bin/chromium (apt-get install chromium); "
        "no browser is downloaded",
    ),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Studio]:
    tmp = tmp_path_factory.mktemp("studio")
    starts = start_studio_fixture(tmp)
    start = next(starts)
    yield start()
    next(starts, None)  # stops the server


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from browser_fixture()


def _type_pattern_and_click(page: Page, pattern: str, run_button: str) -> None:
    """Type into the Pattern field key by key, as a person does, then click Run straight away:
    no Enter, no click elsewhere first."""
    field = page.get_by_role("textbox", name="Pattern *")
    field.click()
    field.press_sequentially(pattern, delay=20)
    page.get_by_role("button", name=run_button).click()


def test_typing_a_pattern_and_clicking_run_runs_it_on_the_corpus_page(
    server: Studio, browser: Browser
) -> None:
    page = open_page(browser, f"{server.url}/corpus?reviewer=ann")
    _type_pattern_and_click(page, "def ", "Run")
    expect(page.get_by_text("findings in").first).to_be_visible(timeout=UI_TIMEOUT_MS)


def test_typing_a_pattern_and_clicking_run_it_runs_it_in_the_blueprints_editor(
    server: Studio, browser: Browser
) -> None:
    page = open_page(browser, f"{server.url}/blueprints?reviewer=ann")
    page.get_by_role("button", name="New blueprint").click()
    settle(page)
    _type_pattern_and_click(page, "def ", "Run it")
    expect(page.get_by_text("findings in").first).to_be_visible(timeout=UI_TIMEOUT_MS)
