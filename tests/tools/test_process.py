"""tools.process: reading ast-grep's `--inspect=entity` trace out of its stderr."""

from __future__ import annotations

import io

import pytest

from codesearch_core.tools import process

TRACE = (
    b"sg: entity|file|a.py: skipped=permissionDenied\n"
    b"WARN: a warning the user should see\n"
    b"sg: entity|file|b.py\n"
    b"sg: entity|file|./c.py: skipped=ioError\r\n"
    b"sg: entity|file|d.py: skipped=emptyFile\n"
    b"sg: summary|run|files=4\n"
    b"ERROR: a last line without its newline"
)


@pytest.mark.parametrize("block", [7, 64, 1024 * 1024])
def test_the_trace_is_read_out_whatever_the_block_size(
    block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Blocks cut lines anywhere; the trace lines must still all be found and removed.
    monkeypatch.setattr(process, "_TRACE_BLOCK_BYTES", block)
    stderr, unread = process._untrace(io.BytesIO(TRACE))
    assert stderr == "WARN: a warning the user should see\nERROR: a last line without its newline"
    assert unread == ["a.py (permission denied)", "c.py (read error)"]


def test_a_trace_with_nothing_else_leaves_no_stderr() -> None:
    assert process._untrace(io.BytesIO(b"sg: entity|file|b.py\nsg: summary|x")) == ("", [])
