"""`read_file`: lines of one corpus file, as the agent is shown them.

Lines are counted at `\n` only, as rg counts them, so a line number read here is the line number a
search printed. Memory is bounded whatever the file: lines are read in pieces of at most
`_PIECE` bytes and only the first `OBSERVATION_MAX_LINE` characters of each are kept, so a
minified file of one 50 MB line costs a pass over it, not 50 MB.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

from codesearch_core.errors import CorpusError
from codesearch_core.gym.actions import ActionError, ReadRequest, Refusal
from codesearch_core.gym.settings import READ_MAX_LINES
from codesearch_core.tools import OBSERVATION_MAX_LINE, resolve_in_corpus

#: rg's test for a binary file: a NUL byte in what it reads first.
_BINARY_PROBE: Final = 8192
_PIECE: Final = 64 * 1024


def _clip(text: str) -> str:
    return text if len(text) <= OBSERVATION_MAX_LINE else text[: OBSERVATION_MAX_LINE - 1] + "…"


def read_lines(corpus_root: Path, request: ReadRequest) -> str | ActionError:
    """The observation of a `read_file` call: a header and `N: text` lines, or why not."""
    try:
        real = resolve_in_corpus(corpus_root, request.path)
    except CorpusError as err:
        return ActionError(Refusal.PATH_OUTSIDE_CORPUS, str(err))
    try:
        st = os.stat(real)
    except OSError:
        return ActionError(Refusal.NOT_A_FILE, f"{request.path}: no such file in the corpus")
    if not stat.S_ISREG(st.st_mode):
        what = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        return ActionError(Refusal.NOT_A_FILE, f"{request.path} is {what}: read_file reads files")
    end = min(request.end_line, request.start_line + READ_MAX_LINES - 1)
    shown: list[str] = []
    number = 0
    try:
        with open(real, "rb") as f:
            if b"\x00" in f.read(_BINARY_PROBE):
                return ActionError(
                    Refusal.BINARY_FILE,
                    f"{request.path} is a binary file (it holds NUL bytes): there are no lines to "
                    "show",
                )
            f.seek(0)
            head = b""
            while number < end:
                piece = f.readline(_PIECE)
                if not piece:
                    if head:  # a last line without its newline
                        number += 1
                        if number >= request.start_line:
                            shown.append(_line(number, head))
                    break
                if len(head) < 4 * OBSERVATION_MAX_LINE:  # keep only what is shown
                    head += piece[: 4 * OBSERVATION_MAX_LINE]
                if piece.endswith(b"\n"):
                    number += 1
                    if number >= request.start_line:
                        shown.append(_line(number, head))
                    head = b""
    except OSError as err:
        return ActionError(Refusal.NOT_A_FILE, f"{request.path} cannot be read: {err.strerror}")
    if not shown:
        return ActionError(
            Refusal.INVALID_ARGUMENTS,
            f"start_line {request.start_line} is past the end of {request.path} ({number} lines)",
        )
    last = request.start_line + len(shown) - 1
    notes = []
    if request.end_line > end:
        notes.append(f"at most {READ_MAX_LINES} lines a call")
    if last < end:
        notes.append(f"the file ends at line {last}")
    note = f" ({'; '.join(notes)})" if notes else ""
    return "\n".join([f"{request.path}:{request.start_line}-{last}{note}", *shown])


def _line(number: int, raw: bytes) -> str:
    text = raw.rstrip(b"\n").rstrip(b"\r").decode("utf-8", "replace")
    return f"{number}: {_clip(text)}"
