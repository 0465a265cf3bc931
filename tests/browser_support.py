"""The studio in a real browser, for the browser tests: `streamlit run app.py` on a loopback port,
driven by Playwright in Debian's Chromium (no browser is downloaded).

A start (and the first run of each page on a new server) costs seconds under load, so the tests
without their own settings share one server per session (`SharedStudio`): its store file is a
link that each test points at its own seeded store while the server holds no lock on it."""

from __future__ import annotations

import os
import shutil
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

from codesearch_core import ingest
from codesearch_core.store import Store
from codesearch_core.store.connect import connect

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
    #: Served by the session's `SharedStudio`: `stop` leaves the server running.
    shared: bool = False

    def stop(self) -> None:
        """Stop the server. A shared one runs on for the next test: this returns once it has let
        go of the test's store, which is what a test stops the server for (to read the store)."""
        if self.shared:
            _wait_let_go(self.db)
            return
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


def launch(
    root: Path,
    db: Path,
    env: dict[str, str] | None = None,
    options: tuple[str, ...] = (),
    port: int = 0,
) -> Studio:
    """`streamlit run app.py` on `port` (a free one if 0) with the store `db` and exports under
    `root`; returns once the server answers its health check."""
    port = port or free_port()
    log = root / "streamlit.log"
    env = {
        **os.environ,
        "CODESEARCH_DB": str(db),
        "CODESEARCH_EXPORTS": str(root / "exports"),  # never the clone's data/exports
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
    studio_ = Studio(f"http://127.0.0.1:{port}", db, process, log)
    try:
        _wait_healthy(studio_)
    except BaseException:
        studio_.stop()
        raise
    return studio_


def _wait_let_go(db: Path) -> None:
    """Return once no process holds `db` (DuckDB lets one process open a file at a time; the
    studio lets go of an idle store after `IDLE_RELEASE_S`)."""
    connect(db, wait_s=START_TIMEOUT_S).close()


class SharedStudio:
    """One server for the tests that start the studio with no settings of their own; each test
    gets it with its own store (`serve`).

    The server's CODESEARCH_DB is a symbolic link. `serve` points it at the test's store while
    this process holds the lock of the store it pointed at before: the server's store (idle, it
    has let go of the file: `store.connect.IDLE_RELEASE_S`) cannot open the old file meanwhile,
    and opens the new one by the link at its next call. DuckDB resolves the link, so the
    write-ahead log lies beside the test's file, and the test reads its own file as before.
    The server's `Store` keeps nothing of a file but its connection, so no state crosses over."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.link = root / "studio.duckdb"
        self._template = root / "template" / "studio.duckdb"
        self._server: Studio | None = None

    def serve(self, db: Path) -> Studio:
        """The shared server on `db`, seeded as a first start seeds it (a new file gets the
        shipped seeds, a test's own store gets them when it has no blueprints)."""
        if db.exists():
            with Store(db) as store:
                ingest.ensure_seeded(store)
        else:
            shutil.copyfile(self._seeded_template(), db)
        held = connect(self.link, wait_s=START_TIMEOUT_S) if self.link.exists() else None
        try:
            staged = self.root / "next.duckdb"
            staged.unlink(missing_ok=True)
            staged.symlink_to(db)
            staged.replace(self.link)  # atomic: the server never sees no store
        finally:
            if held is not None:
                held.close()
        shutil.rmtree(self.root / "exports", ignore_errors=True)  # each test's exports alone
        if self._server is None or self._server.process.poll() is not None:
            self._server = launch(self.root, self.link)
        server = self._server
        return Studio(server.url, db, server.process, server.log, shared=True)

    def _seeded_template(self) -> Path:
        if not self._template.exists():
            self._template.parent.mkdir(parents=True, exist_ok=True)
            with Store(self._template) as store:
                ingest.ensure_seeded(store)
        return self._template

    def close(self) -> None:
        if self._server is not None:
            self._server.stop()


def shared_studio_fixture(root: Path) -> Iterator[SharedStudio]:
    shared = SharedStudio(root)
    try:
        yield shared
    finally:
        shared.close()


def start_studio_fixture(
    tmp_path: Path, shared: SharedStudio | None = None
) -> Iterator[Callable[..., Studio]]:
    """Starts the studio on the test's store `tmp_path/studio.duckdb` (seeded on first start);
    `start(env=..., options=(...), port=...)` adds environment variables and `streamlit run`
    options, and picks the port (one a secrets file names already). With none of them and a
    `shared` studio, it is served by that (no start); otherwise a server of its own is started,
    and stopped after the test."""
    started: list[Studio] = []

    def start(
        env: dict[str, str] | None = None, options: tuple[str, ...] = (), port: int = 0
    ) -> Studio:
        db = tmp_path / "studio.duckdb"
        if shared is not None and not env and not options and not port:
            return shared.serve(db)
        studio_ = launch(tmp_path, db, env, options, port)
        started.append(studio_)
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
