"""The server's own defaults, from `.streamlit/config.toml`: `uv run streamlit run app.py` as the
README gives it listens on this machine only (local mode)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from browser_support import REPO, free_port


def _listening(port: int) -> set[str]:
    """Local addresses (hex, as /proc/net/tcp{,6} write them) with a socket listening on `port`."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.add(address)
    return found


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads Linux's /proc/net/tcp")
def test_the_studio_listens_on_localhost_only_by_default(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "CODESEARCH_DB": str(tmp_path / "studio.duckdb")}
    # The README's command, with only the port changed: the address comes from the config file.
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
               "--server.headless", "true"]  # fmt: skip
    with (tmp_path / "log").open("wb") as log:
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                    break
            except OSError:
                time.sleep(0.3)
        addresses = _listening(port)
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert addresses, (tmp_path / "log").read_text()
    loopback = {"0100007F", "00000000000000000000000001000000"}  # 127.0.0.1, ::1
    assert addresses <= loopback, addresses  # never 0.0.0.0 or ::
