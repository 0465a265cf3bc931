"""Logins and roles in real browsers: a studio behind a login proxy, and one with OpenID Connect
login against a provider the test starts (`oidc-provider-mock`). Local mode is every other
browser test: no login, a typed reviewer name."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import oidc_provider_mock
import pytest
from access_walk import ANN, CARD, LEE, check_store, goto, main_text, team_store, walk
from browser_support import CHROMIUM, UI_TIMEOUT_MS, Studio, free_port, settle
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
    stranger.wait_for_selector(f"text=takes who you are from the {HEADER} header")
    assert not stranger.get_by_role("button", name="Accept").count()

    ann = _as(browser, server.url, {HEADER: ANN})
    lee = _as(browser, server.url, {HEADER: LEE})
    accepted = walk(server, ann, lee, conflict)

    # An admin removes ann's access from the command line while her tab is open: her next click
    # is refused, and she is told why.
    goto(ann, f"{server.url}/review", "Item 3 of 6")
    assert not ann.get_by_role("textbox", name="Your name").count()  # the login names her
    card = CARD.search(main_text(ann))
    command = [sys.executable, "-m", "codesearch_core", "db", "role", ANN, "disabled"]
    env = {**os.environ, "CODESEARCH_DB": str(server.db)}
    subprocess.run(command, env=env, check=True, capture_output=True, timeout=120)
    ann.get_by_role("button", name=re.compile("^Reject")).click()
    # The card reruns alone (a fragment): the store's refusal shows in its place.
    ann.wait_for_selector("text=ann@example.com's access was removed by an admin")
    assert card and card.group(0) not in main_text(ann)  # no card: nothing more to decide
    assert "Traceback" not in main_text(ann) and main_text(ann).count("access was removed") == 1
    ann.reload()  # the next whole run shows the reason in place of the studio
    ann.wait_for_selector("text=Your access was removed")
    server.stop()
    check_store(server.db, accepted, conflict, "proxy", ann_role="disabled")


@pytest.fixture
def oidc_provider() -> Iterator[str]:
    """A real OpenID Connect provider on a loopback port; its login form takes any subject, whose
    token then carries it as the `email` claim. Returns its issuer URL."""
    with oidc_provider_mock.run_server_in_thread() as server:
        yield f"http://localhost:{server.server_port}"


def _login(browser: Browser, url: str, email: str) -> Page:
    """Log in as `email` in a tab of its own: the studio's Log in, then the provider's form."""
    page = _as(browser, url, {})
    page.get_by_role("button", name="Log in").click()
    page.wait_for_selector("input[name=sub]")
    page.fill("input[name=sub]", email)
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(f"{url}/**")
    page.wait_for_selector(f"text={email}")
    settle(page)
    return page


def test_oidc_login_two_people_each_act_as_themselves_with_their_role(
    start_studio: Callable[..., Studio], browser: Browser, tmp_path: Path, oidc_provider: str
) -> None:
    conflict = team_store(tmp_path / "studio.duckdb")
    port = free_port()
    secrets_file = tmp_path / "secrets.toml"
    secrets_file.write_text(
        "[auth]\n"
        f'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        f'cookie_secret = "{secrets.token_hex(16)}"\n'
        'client_id = "codesearch-studio"\n'
        'client_secret = "not-a-secret-in-a-test"\n'
        f'server_metadata_url = "{oidc_provider}/.well-known/openid-configuration"\n',
        encoding="utf-8",
    )
    server = start_studio(
        env={"CODESEARCH_AUTH": "oidc", "CODESEARCH_LEADS": LEE},
        options=("--secrets.files", str(secrets_file)),
        port=port,
    )
    # Before a login there is only the login page, whatever the address asks for; a proxy's
    # header counts for nothing in a studio not set up for one.
    stranger = _as(browser, f"{server.url}/export?reviewer={LEE}", {"X-Forwarded-Email": LEE})
    stranger.wait_for_selector("text=log in to review")
    assert not stranger.get_by_role("button", name="Write").count()

    ann = _login(browser, server.url, ANN)
    lee = _login(browser, server.url, LEE)
    accepted = walk(server, ann, lee, conflict)

    # A login that expired (its cookie gone) is asked to log in again.
    lee.context.clear_cookies()
    lee.reload()
    lee.wait_for_selector("text=log in to review")
    assert LEE not in lee.inner_text("body")

    # Logging out ends the session's access: the login page again, and nothing is decided.
    ann.get_by_role("button", name="Log out").click()
    ann.get_by_role("button", name="End session").click()  # the provider's own logout page
    ann.wait_for_selector("text=log in to review")
    assert ANN not in ann.inner_text("body")
    server.stop()
    check_store(server.db, accepted, conflict, "oidc")


def test_an_upload_over_the_configured_size_is_refused_before_it_is_parsed(
    start_studio: Callable[..., Studio], browser: Browser, tmp_path: Path
) -> None:
    server = start_studio(env={"CODESEARCH_MAX_UPLOAD_MB": "1"})
    page = _as(browser, f"{server.url}/blueprints", {})
    page.get_by_text("Import blueprints JSONL").click()
    big = tmp_path / "big.jsonl"
    big.write_bytes(b'{"id": "x"}\n' * 200_000)  # 2.4 MB
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(big))
    page.wait_for_selector("text=File must be 1.0MB or smaller")
    settle(page)
    assert not page.get_by_role("button", name="Import").count()  # nothing to import
