"""The studio in a real browser, for the browser tests: `streamlit run app.py` on a loopback port,
driven by Playwright in Debian's Chromium (no browser is downloaded)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

CHROMIUM = Path("/usr/bin/chromium")
REPO = Path(__file__).resolve().parents[1]
SCREENSHOTS = REPO / "docs" / "screenshots"
#: The marks of every browser test module: `pytestmark = BROWSER_MARKS`.
BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="needs Debian's Chromium at /usr/bin/chromium (apt-get install chromium); "
        "no browser is downloaded",
    ),
]
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
START_TIMEOUT_S = 60.0
#: A Streamlit rerun after a click or a key: generous, since CI machines are slow.
UI_TIMEOUT_MS = 30_000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Studio:
    url: str
    db: Path
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)


def _wait_healthy(studio_: Studio) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if studio_.process.poll() is not None:
            raise RuntimeError(f"streamlit exited early:\n{studio_.log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{studio_.url}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"streamlit did not become healthy:\n{studio_.log.read_text()[-3000:]}")


def start_studio_fixture(tmp_path: Path) -> Iterator[Callable[..., Studio]]:
    """Starts `streamlit run app.py` on a free port with a temp store (seeded on first start);
    `start(env=..., options=(...), port=...)` adds environment variables and `streamlit run`
    options, and picks the port (one a secrets file names already)."""
    started: list[Studio] = []

    def start(
        env: dict[str, str] | None = None, options: tuple[str, ...] = (), port: int = 0
    ) -> Studio:
        port = port or free_port()
        log = tmp_path / "streamlit.log"
        env = {
            **os.environ,
            "CODESEARCH_DB": str(tmp_path / "studio.duckdb"),
            "CODESEARCH_EXPORTS": str(tmp_path / "exports"),  # never the clone's data/exports
            **(env or {}),
        }
        command = [
            sys.executable, "-m", "streamlit", "run", "app.py",
            "--server.port", str(port), "--server.headless", "true",
            "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
            "--server.fileWatcherType", "none", *options,
        ]  # fmt: skip
        with log.open("wb") as out:
            process = subprocess.Popen(command, cwd=REPO, env=env, stdout=out, stderr=out)
        studio_ = Studio(f"http://127.0.0.1:{port}", tmp_path / "studio.duckdb", process, log)
        started.append(studio_)
        _wait_healthy(studio_)
        return studio_

    yield start
    for s in started:
        s.stop()


def browser_fixture() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def open_page(browser: Browser, url: str) -> Page:
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    page.set_default_timeout(UI_TIMEOUT_MS)
    page.goto(url)
    settle(page)
    return page


def settle(page: Page) -> None:
    """Wait until the app has rendered and no script run is in progress or asked for, twice 400 ms
    apart: a run can be requested (`rerunRequested`) before it shows as running, and on a loaded
    machine a key pressed in that gap is lost with the card it was meant for (CI saw it)."""
    page.wait_for_selector('[data-testid="stApp"]')
    idle = """() => {
        const app = document.querySelector('[data-testid="stApp"]');
        return app && app.getAttribute('data-test-script-state') === 'notRunning'
            && !document.querySelector('[data-testid="stStatusWidget"] [data-testid="stStatusWidgetRunningIcon"]');
    }"""
    for _ in range(20):
        page.wait_for_function(idle)
        page.wait_for_timeout(400)
        if page.evaluate(idle):
            return


def accept_enabled(page: Page) -> bool:
    """Whether the review card's Accept can be pressed (a failed or unrun call cannot be accepted).

    Matched by the button's text *containing* "Accept": the shortcut hint is part of its text."""
    return bool(
        page.evaluate(
            """() => [...document.querySelectorAll('button')]
                .some(b => b.innerText.includes('Accept') && !b.innerText.includes('Final')
                           && !b.disabled)"""
        )
    )


def clipped(page: Page, selector: str) -> list[str]:
    """The texts of the visible elements under `selector` (and the matches themselves) whose
    content does not fit in them: cut off, or scrolled sideways inside the control."""
    return list(
        page.evaluate(
            """(sel) => [...document.querySelectorAll(sel)]
                .flatMap(g => [g, ...g.querySelectorAll('*')])
                .filter(e => e.offsetParent !== null && e.scrollWidth > e.clientWidth + 1)
                .map(e => e.innerText)""",
            selector,
        )
    )
