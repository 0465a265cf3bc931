"""A store opened by another process, as the studio or a long `codesearch verify` holds it: for the
tests of what a second process sees (DuckDB lets one process open a file at a time)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_SCRIPT = textwrap.dedent(
    """
    import sys
    from codesearch_core.store.core import Store
    idle = None if sys.argv[2] == "none" else float(sys.argv[2])
    store = Store(sys.argv[1], idle_release_s=idle)
    store.counts()
    print("ready", flush=True)
    for line in sys.stdin:
        print(store.counts().blueprints, flush=True)  # opens the file again if it let go of it
    store.close()
    """
)


class Holder:
    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.pid = process.pid

    def blueprints(self) -> int:
        """The holder's own count of blueprints, read through its store now."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        return int(self.process.stdout.readline())


@contextmanager
def store_held_elsewhere(path: Path, *, idle_release_s: float | None) -> Iterator[Holder]:
    """Another process with `Store(path, idle_release_s=...)` open until the block ends (None:
    it holds the file all along; a number: it lets go after that long idle, as the studio does)."""
    idle = "none" if idle_release_s is None else str(idle_release_s)
    process = subprocess.Popen(
        [sys.executable, "-c", _SCRIPT, str(path), idle],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        yield Holder(process)
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=60)
    assert process.returncode == 0
