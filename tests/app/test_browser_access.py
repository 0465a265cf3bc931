"""Logins and roles in real browsers: a studio behind a login proxy, and one with OpenID Connect
login against a provider the test starts (`oidc-provider-mock`). Local mode is every other
browser test: no login, a typed reviewer name."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from access_walk import ANN, LEE, check_store, main_text, team_store, walk
from browser_support import CHROMIUM, UI_TIMEOUT_MS, Studio, settle
from playwright.sync_api import Browser, Page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's Chromium (apt-get install chromium)"
    ),
]

HEADER = "X-Forwarded-Email"


def _as(browser: Browser, url: str, headers: dict[str, str]) -> Page:
    """A tab of its own (a browser context: its own cookies) whose requests carry `headers`, as
    a login proxy in front of the studio would add them."""
    context = browser.new_context(
        extra_http_headers=headers, viewport={"width": 1440, "height": 1000}
    )
    page = context.new_page()
    page.set_default_timeout(UI_TIMEOUT_MS)
    page.goto(url)
    settle(page)
    return page


def test_behind_a_login_proxy_the_header_names_the_user_and_roles_apply(
    start_studio: Callable[..., Studio], browser: Browser, tmp_path: Path
) -> None:
    conflict = team_store(tmp_path / "studio.duckdb")
    server = start_studio(
        env={
            "CODESEARCH_AUTH": "proxy",
            "CODESEARCH_PROXY_HEADER": HEADER,
            "CODESEARCH_LEADS": LEE,
        }
    )
    # A request that did not come through the proxy is refused, whatever its address says.
    stranger = _as(browser, f"{server.url}/review?reviewer={LEE}", {})
    stranger.wait_for_selector("text=This request did not come through the login proxy")
    assert HEADER in main_text(stranger)
    assert not stranger.get_by_role("button", name="Accept").count()

    ann = _as(browser, server.url, {HEADER: ANN})
    lee = _as(browser, server.url, {HEADER: LEE})
    accepted = walk(server, ann, lee, conflict)
    server.stop()
    check_store(server.db, accepted, conflict, "proxy")
