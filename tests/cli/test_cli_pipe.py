"""A command whose reader goes away (`codesearch ... --json | head`) stops quietly, as rg does."""

from __future__ import annotations

import subprocess
import sys


def test_a_reader_that_goes_away_ends_the_command_quietly() -> None:
    call = '{"name": "ripgrep_search", "arguments": {"pattern": "def "}}'
    proc = subprocess.Popen(
        [sys.executable, "-m", "codesearch_core", "run", "--corpus", "click", call, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()  # `head -1`: one line read, then the pipe is closed
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
