"""One rg match's long line read back from the file rg searched (see `tools.long_lines`).

The file holds the very bytes of the line from the message's `absolute_offset` on, unescaped: the
columns of the submatches are counted there, between one submatch and the next, so the line's
JSON need not be decoded at all. Also here: the parts of a match message both ways of reading a
long line use (its structs, character counting, the findings).
"""

from __future__ import annotations

import base64
import os
import stat
from pathlib import Path
from typing import Final

import msgspec

from codesearch_core.errors import ToolOutputError
from codesearch_core.models import Finding


class RgData(msgspec.Struct, gc=False):
    text: str | None = None
    bytes: str | None = None


class RgSubmatch(msgspec.Struct, gc=False):
    match: RgData
    start: int
    end: int


class RgTail(msgspec.Struct, gc=False):
    line_number: int
    absolute_offset: int
    submatches: list[RgSubmatch]


_CONTINUATION_BYTES: Final = bytes(range(0x80, 0xC0))
#: Byte-order marks (UTF-8, UTF-16): rg transcodes such a file, so its offsets are not the file's.
_BOMS: Final = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
#: How much of the searched file is read at once to count characters.
_READ_BYTES: Final = 4 * 1024 * 1024


def cut_character(raw: bytes) -> int:
    """Bytes of a UTF-8 character cut short at the end of `raw` (0 when it ends on a whole one)."""
    for back in range(1, min(4, len(raw)) + 1):
        byte = raw[-back]
        if byte < 0x80:
            return 0
        if byte >= 0xC0:  # a lead byte: how long its character is
            size = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return back if back < size else 0
    return 0


def count_chars(raw: bytes, valid: bool) -> int:
    """Characters in `raw`, decoded as the rg parser decodes lines (U+FFFD for a bad byte).

    `valid`: `raw` is known to be UTF-8 (rg sends such a line as text), whose characters are its
    bytes but the continuation bytes: counted without building the decoded str (~2x faster).
    """
    if raw.isascii():
        return len(raw)
    if valid:
        return len(raw.translate(None, _CONTINUATION_BYTES))
    return len(raw.decode("utf-8", "replace"))


class FileLine:
    """The searched file, read for the bytes of one long line (see the module docstring)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    @staticmethod
    def open(root: Path, path: str) -> FileLine | None:
        """The file rg printed as `path`, if it is a regular file rg did not transcode."""
        try:
            fd = os.open(root / path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, ValueError):  # gone, or a path rg printed as bytes (not our name)
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode) or os.pread(fd, 3, 0).startswith(_BOMS):
                os.close(fd)
                return None
        except OSError:
            os.close(fd)
            return None
        return FileLine(fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def findings(self, path: str, data: RgTail, *, base64_line: bool) -> list[Finding]:
        start = data.absolute_offset
        line = data.line_number
        if not data.submatches:
            return [whole_lines_finding(path, self._through_newline(start), line, start)]
        out: list[Finding] = []
        at = col = 0  # a cursor: byte offset in the line, and its character column
        for sm in data.submatches:
            if sm.start < at:  # not left to right after all: count from the line's start again
                at = col = 0
            col += self._chars(start + at, start + sm.start, valid=not base64_line)
            at = sm.start
            raw = _raw(sm.match)
            if os.pread(self._fd, len(raw), start + sm.start) != raw:
                raise ToolOutputError(
                    f"{path} changed while rg searched it: the match rg reports at byte "
                    f"{start + sm.start} is not in the file there; run the search again"
                )
            out.append(submatch_finding(path, data, sm, line, col))
        return out

    def _chars(self, begin: int, end: int, *, valid: bool) -> int:
        """Characters in the file's bytes [begin, end), counted as `count_chars` does, a piece at a
        time (cut on whole characters, so that a bad byte decodes as it would in one piece)."""
        count = 0
        while valid and begin < end:  # UTF-8: all bytes but the continuation bytes, however cut
            piece = os.pread(self._fd, min(_READ_BYTES, end - begin), begin)
            if not piece:
                raise ToolOutputError("the searched file is shorter than the line rg reports")
            begin += len(piece)
            count += len(piece) if piece.isascii() else len(piece) - _continuation_bytes(piece)
        carry = b""
        while begin < end:
            piece = carry + os.pread(self._fd, min(_READ_BYTES, end - begin), begin)
            if not piece:
                raise ToolOutputError("the searched file is shorter than the line rg reports")
            begin += len(piece) - len(carry)
            cut = len(piece) if begin >= end else len(piece) - cut_character(piece)
            count += count_chars(piece[:cut], valid)
            carry = piece[cut:]
        return count + (count_chars(carry, valid) if carry else 0)

    def _through_newline(self, begin: int) -> bytes:
        """The line from `begin` to its newline (included): what rg prints as `lines`."""
        pieces = []
        while True:
            piece = os.pread(self._fd, _READ_BYTES, begin)
            end = piece.find(b"\n")
            pieces.append(piece if end < 0 else piece[: end + 1])
            if end >= 0 or len(piece) < _READ_BYTES:
                return b"".join(pieces)
            begin += len(piece)


def _continuation_bytes(raw: bytes) -> int:
    # numpy counts ~10x faster, but importing it costs 0.1-0.4 s: more than it saves on a 50 MB line.
    return len(raw) - len(raw.translate(None, _CONTINUATION_BYTES))


def submatch_finding(path: str, data: RgTail, sm: RgSubmatch, line: int, col: int) -> Finding:
    """The finding of submatch `sm`, which starts at `line` and character column `col` (0-based)."""
    text = _text(sm.match)
    inner = text.rfind("\n", 0, len(text) - 1)
    if inner < 0:
        end_line, end_col = line, col + len(text)
    else:
        end_line = line + text.count("\n", 0, len(text) - 1)
        end_col = len(text) - inner - 1
    offset = data.absolute_offset
    return Finding(
        path, line, col + 1, end_line, end_col + 1, offset + sm.start, offset + sm.end, text, None
    )


def _raw(data: RgData) -> bytes:
    if data.text is not None:
        return data.text.encode("utf-8", "surrogatepass")
    return base64.b64decode(data.bytes or "")


def whole_lines_finding(path: str, raw: bytes, line_number: int, offset: int) -> Finding:
    r"""The finding of an rg match without submatches (PCRE2's \K can move a match's start before
    where rg looks for it in `lines`): its lines, as bare `rg -n` prints them."""
    body = raw[:-1] if raw.endswith(b"\n") else raw
    body = body[:-1] if body.endswith(b"\r") else body
    text = body.decode("utf-8", "replace")
    last = text.rsplit("\n", 1)[-1]
    end_line = line_number + text.count("\n")
    return Finding(
        path, line_number, 1, end_line, len(last) + 1, offset, offset + len(body), text, None
    )


def _text(data: RgData) -> str:
    if data.text is not None:
        return data.text
    return base64.b64decode(data.bytes or "").decode("utf-8", "replace")
