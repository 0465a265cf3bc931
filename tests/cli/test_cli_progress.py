"""The long commands' progress line (`cli.progress`): tqdm's bar with the count, the rate and the
time left on a terminal (a real pseudo-terminal here), nothing at all on a pipe or a file."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

from codesearch_core.cli.progress import Progress

REPO = Path(__file__).resolve().parents[2]


def _drain(primary: int) -> str:
    """Everything written to the pseudo-terminal so far (it arrives in pieces)."""
    chunks = []
    while select.select([primary], [], [], 0.2)[0]:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(primary)
    return b"".join(chunks).decode()


def test_on_a_pseudo_terminal_the_line_shows_the_count_rate_time_left_and_figures() -> None:
    primary, secondary = pty.openpty()
    with open(secondary, "w", encoding="utf-8", closefd=True) as terminal:
        assert terminal.isatty()
        with Progress("verify", total=4, unit="calls", stream=terminal) as progress:
            assert progress.enabled
            progress.update(2, errors=1)
            progress.update(4, errors=1)
        assert progress.done == 4
    text = _drain(primary)
    assert "verify" in text and "4/4" in text and "errors=1" in text
    assert "calls/s" in text  # the rate
    assert "<" in text  # elapsed<left, tqdm's time left


def test_on_a_pipe_or_a_file_nothing_is_written() -> None:
    stream = io.StringIO()
    with Progress("verify", total=4, unit="calls", stream=stream) as progress:
        progress.update(3, errors=0)
    assert not progress.enabled and stream.getvalue() == ""


def test_a_command_whose_stderr_is_a_pipe_prints_its_summary_and_no_progress(
    tmp_path: Path,
) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "a.py").write_text("print('x')\n", encoding="utf-8")
    env = {**os.environ, "CODESEARCH_CORPORA": str(tmp_path / "corpora")}
    done = subprocess.run(
        [sys.executable, "-m", "codesearch_core", "corpus", "add", "tiny", "--from", str(source)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "added corpus tiny" in done.stdout
    assert "hashing" not in done.stderr and "copying" not in done.stderr
    # The same command with stderr on a pseudo-terminal draws its lines.
    primary, secondary = pty.openpty()
    again = subprocess.run(
        [sys.executable, "-m", "codesearch_core", "corpus", "add", "tiny2", "--from", str(source)],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=secondary, timeout=120, check=False,
    )  # fmt: skip
    os.close(secondary)
    drawn = _drain(primary)
    assert again.returncode == 0, drawn
    assert "hashing" in drawn and "1/1" in drawn and "files/s" in drawn
