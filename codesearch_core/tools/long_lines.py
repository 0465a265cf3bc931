"""rg messages too long to hold: a minified bundle's 200 MB line is one `match` message.

rg prints the whole matched line (`lines`) in the message, before the submatches that say where in
it the matches are. Holding such a message costs several times the line: its JSON bytes, the
decoded text, the slices. Past `LONG_MESSAGE_BYTES` the rg parser hands the message here instead,
piece by piece as the pipe delivers it:

- the line's JSON string is unescaped block by block into an unnamed temporary file (the page
  cache holds it, not this process), and each block gets an index entry: its byte offset, the line
  and character column it starts at, and whether it is ASCII without a newline (then a byte offset
  in it *is* a column, and it is never read back);
- the submatches, which come after the line and carry their own matched text, are decoded at the
  end; the start of each is found through the index (reading back only a block that is not plain
  ASCII), and its end follows from its text.

Memory is then bounded by the findings (the output), not by the longest line. A `context` message
(`-C`) that long is skipped unread: context lines are not findings.

When the parser knows the directory rg ran in, and the line is one line (no `-U`), there is a
faster way (`line_file.FileLine`): the searched file holds the very bytes of the line, from the
message's `absolute_offset` on, unescaped. The line's JSON is then only scanned for its end (`bytes.find`),
never decoded, and the columns are counted in the file, between one submatch and the next, once
rg is done: unescaping in Python ran at ~150 MB/s, slower than rg writes the line, and this was
most of the runner's time on a minified bundle. Each submatch's text is checked against the
file's bytes where rg says it is; a file that differs (changed while rg searched it) is
`bad_output`. A file with a byte-order mark (rg transcodes it) or that cannot be opened takes the
unescaping path.
"""

from __future__ import annotations

import base64
import bisect
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

import msgspec

from codesearch_core.errors import ToolOutputError
from codesearch_core.models import Finding
from codesearch_core.tools.line_file import (
    FileLine,
    RgSubmatch,
    RgTail,
    count_chars,
    cut_character,
    submatch_finding,
    whole_lines_finding,
)

#: A partial rg message longer than this is streamed; shorter ones are parsed whole (faster).
LONG_MESSAGE_BYTES: Final = 4 * 1024 * 1024

_MATCH: Final = b'{"type":"match"'
_CONTEXT: Final = b'{"type":"context"'
_TEXT: Final = b'"lines":{"text":"'
_BYTES: Final = b'"lines":{"bytes":"'
#: What follows the line's string. Inside the string every quote is escaped (`\\"`), and this has
#: an unescaped one after `},`: its first occurrence is the end, found at `bytes.find`'s speed
#: (a bundle's line has a quote every few bytes; checking each for escapes would not be).
_LINE_END: Final = b'"},"line_number":'
#: How far into a message the line starts: after the type and the path (a path is < 4 KiB).
_HEAD_LIMIT: Final = 64 * 1024
#: The submatches of one line are held to place them (each with its text): a pattern that matches
#: everywhere in a 200 MB line would make gigabytes of them. Past this the run is `bad_output`.
_TAIL_LIMIT: Final = 256 * 1024 * 1024


_TAIL: Final = msgspec.json.Decoder(RgTail)
_STRING: Final = msgspec.json.Decoder(str)


@dataclass(frozen=True, slots=True)
class _Block:
    start: int  # byte offset in the line (and in the temporary file)
    size: int
    line: int  # lines and characters before the block, counted from the message's first line
    col: int
    plain: bool  # ASCII without a newline: offsets in it are columns


def _backslashes_before(data: bytes, at: int) -> int:
    i = at
    while i > 0 and data[i - 1] == 0x5C:  # a backslash
        i -= 1
    return at - i


class LongMessage:
    """One rg message streamed through `feed`; `findings` once `feed` has seen its newline."""

    def __init__(self, path: str, root: Path | None = None, *, multiline: bool = True) -> None:
        """`root`: where rg ran (its printed paths are relative to it), if known; `multiline`:
        rg ran with `-U`. Without `-U` and with a root, the file is read instead (`FileLine`)."""
        self._path = path
        self._source = None if root is None or multiline else FileLine.open(root, path)
        self._keep = b""  # the end of the last piece: the start of the end marker, maybe
        self._state = "head"  # head -> line|scan -> tail -> done; or head -> skip -> done
        self._buf = bytearray()  # head or tail bytes; the undecoded end of the line
        self._base64 = False
        self._file: IO[bytes] | None = None
        self._blocks: list[_Block] = []
        self._size = 0  # bytes of the line written so far
        self._carry = b""  # the start of a character the next piece completes
        # Where the last submatch was (see `_position`).
        self._cursor_block = 0
        self._cursor_at = 0
        self._cursor_line = 0
        self._cursor_col = 0
        self._cursor_bytes: bytes | None = None  # the cursor block's bytes, once read back
        self._line = 0
        self._col = 0

    def feed(self, chunk: bytes) -> bytes | None:
        """Take more of the message. None: more is needed; else what followed its newline."""
        if self._state == "skip":
            end = chunk.find(b"\n")
            if end < 0:
                return None
            self._state = "done"
            return chunk[end + 1 :]
        if self._state == "head":
            self._buf += chunk
            return self._after_head()
        if self._state == "scan":
            return self._scan(chunk)
        if self._state == "line":
            return self._line_bytes(chunk)
        return self._tail_bytes(chunk)

    def _after_head(self) -> bytes | None:
        head = bytes(self._buf[:_HEAD_LIMIT])
        if head.startswith(_CONTEXT):
            self.close()
            self._source = None
            self._state = "skip"
            rest = bytes(self._buf)
            self._buf.clear()
            return self.feed(rest)
        if not head.startswith(_MATCH):
            raise ToolOutputError(f"rg printed a message of over {LONG_MESSAGE_BYTES:,} bytes "
                                  f"that is not a match (near {head[:200]!r})")  # fmt: skip
        at, marker = head.find(_TEXT), _TEXT
        if at < 0:
            at, marker = head.find(_BYTES), _BYTES
        if at < 0:
            if len(self._buf) < _HEAD_LIMIT:
                return None
            raise ToolOutputError(f"rg printed a match without its line (near {head[:200]!r})")
        self._base64 = marker is _BYTES
        rest = bytes(self._buf[at + len(marker) :])
        self._buf.clear()
        if self._source is not None:
            self._state = "scan"
            return self._scan(rest)
        # Closed by `findings` (or `close`) once the message is read; unnamed, so nothing is left
        # on disk if the process dies.
        self._file = tempfile.TemporaryFile()  # noqa: SIM115
        self._state = "line"
        return self._line_bytes(rest)

    def _scan(self, chunk: bytes) -> bytes | None:
        """The line's JSON, only looked through for its end (the file has the line)."""
        keep = self._keep
        edge = keep + chunk[: len(_LINE_END) - 1]  # an end marker the pipe cut in two
        close = edge.find(_LINE_END)
        if close >= 0:
            rest = (keep + chunk)[close + 1 :]
        else:
            close = chunk.find(_LINE_END)
            if close < 0:
                self._keep = (keep + chunk[-len(_LINE_END) :])[-(len(_LINE_END) - 1) :]
                return None
            rest = chunk[close + 1 :]
        self._keep = b""
        self._state = "tail"
        return self._tail_bytes(rest)

    def _line_bytes(self, chunk: bytes) -> bytes | None:
        data = bytes(self._buf) + chunk if self._buf else chunk
        self._buf.clear()
        close = data.find(_LINE_END)
        if close < 0:
            # Keep what may be the start of the end marker, and a unit the pipe cut in two.
            body = data[: max(0, len(data) - len(_LINE_END) + 1)]
            body = body[: len(body) - self._cut_unit(body)]
            self._buf += data[len(body) :]
            self._write(body, last=False)
            return None
        self._write(data[:close], last=True)
        self._state = "tail"
        return self._tail_bytes(data[close + 1 :])

    def _cut_unit(self, body: bytes) -> int:
        """Bytes at the end of `body` that the pipe cut from their unit (an escape, a base64
        quad): kept for the next piece, since each piece is decoded on its own."""
        if self._base64:
            return len(body) % 4
        slash = body.rfind(b"\\", max(0, len(body) - 6))
        if slash >= 0 and _backslashes_before(body, slash) % 2 == 0:  # an escape starts there
            needed = 6 if body[slash + 1 : slash + 2] == b"u" else 2
            if len(body) - slash < needed:
                return len(body) - slash
        # Unescaped, the string's bytes are the line's UTF-8: do not cut a character either.
        return cut_character(body)

    def _write(self, body: bytes, *, last: bool) -> None:
        text: str | None = None
        if self._base64:
            # Not UTF-8 (else rg would send text): a block ends on a whole character, so that
            # its columns can be counted on their own.
            raw = self._carry + base64.b64decode(body)
            cut = len(raw) if last else len(raw) - cut_character(raw)
            raw, self._carry = raw[:cut], raw[cut:]
        elif b"\\" in body:
            text = _STRING.decode(b'"' + body + b'"')
            raw = text.encode("utf-8", "surrogatepass")
        else:
            raw = body  # `_cut_unit` kept its characters whole
        if not raw:
            return
        assert self._file is not None
        self._file.write(raw)
        plain = raw.isascii() and b"\n" not in raw
        self._blocks.append(_Block(self._size, len(raw), self._line, self._col, plain))
        self._size += len(raw)
        if plain:
            self._col += len(raw)
        elif text is not None:  # the decoded text counts characters for free
            newline = text.rfind("\n")
            if newline >= 0:
                self._line += text.count("\n")
                self._col = len(text) - newline - 1
            else:
                self._col += len(text)
        elif b"\n" in raw:
            self._line += raw.count(b"\n")
            self._col = count_chars(raw[raw.rfind(b"\n") + 1 :], not self._base64)
        else:
            self._col += count_chars(raw, not self._base64)

    def _tail_bytes(self, chunk: bytes) -> bytes | None:
        end = chunk.find(b"\n")
        self._buf += chunk if end < 0 else chunk[:end]
        if len(self._buf) > _TAIL_LIMIT:
            raise ToolOutputError(
                f"rg printed over {_TAIL_LIMIT // 2**20} MiB of submatches for one line; narrow "
                "the pattern (it matches almost everywhere in a very long line)"
            )
        if end < 0:
            return None
        self._state = "done"
        return chunk[end + 1 :]

    def close(self) -> None:
        """Let go of the files (`findings` does it; this is for a message never finished)."""
        for f in (self._file, self._source):
            if f is not None:
                f.close()

    def findings(self) -> list[Finding]:
        """The message's findings, as `parsers.ripgrep_findings` gives them for a short one."""
        if self._state != "done" or (self._file is None and self._source is None):
            self.close()
            return []  # a skipped context line
        tail = bytes(self._buf).rstrip(b"\r")
        self._buf.clear()
        if not (tail.startswith(b"},") and tail.endswith(b"}}")):
            raise ToolOutputError(f"rg printed a match that does not end as JSON: {tail[-200:]!r}")
        try:
            data = _TAIL.decode(b"{" + tail[2:-2] + b"}")
        except (msgspec.DecodeError, msgspec.ValidationError) as err:
            raise ToolOutputError(
                f"rg printed a match that is not the expected JSON: {err}"
            ) from None
        try:
            if self._source is not None:
                return self._source.findings(self._path, data, base64_line=self._base64)
            if not data.submatches:
                return [self._whole_line(data)]
            return [self._finding(data, sm) for sm in data.submatches]
        finally:
            self.close()

    def _finding(self, data: RgTail, sm: RgSubmatch) -> Finding:
        line, col = self._position(sm.start)
        return submatch_finding(self._path, data, sm, line + data.line_number, col)

    def _position(self, at: int) -> tuple[int, int]:
        """(lines after the first, character column) of byte `at` of the line.

        Submatches come left to right, so a cursor moves forward through the blocks and a block
        that is not plain is read back once, and counted from where the last submatch was.
        """
        blocks = self._blocks
        if not blocks:
            return 0, 0
        if at < self._cursor_at:  # not left to right after all: back to the block that holds it
            self._to_block(max(0, bisect.bisect_right(blocks, at, key=lambda b: b.start) - 1))
        i = self._cursor_block
        while i + 1 < len(blocks) and blocks[i + 1].start <= at:
            i += 1
        if i != self._cursor_block:
            self._to_block(i)
        block = blocks[i]
        if block.plain:
            line, col = block.line, block.col + (at - block.start)
        else:
            if self._cursor_bytes is None:
                assert self._file is not None
                self._file.seek(block.start)
                self._cursor_bytes = self._file.read(block.size)
            gap = self._cursor_bytes[self._cursor_at - block.start : at - block.start]
            newline = gap.rfind(b"\n")
            if newline < 0:
                line, col = self._cursor_line, self._cursor_col + count_chars(gap, not self._base64)
            else:
                line, col = (
                    self._cursor_line + gap.count(b"\n"),
                    count_chars(gap[newline + 1 :], not self._base64),
                )
        self._cursor_at, self._cursor_line, self._cursor_col = at, line, col
        return line, col

    def _to_block(self, i: int) -> None:
        block = self._blocks[i]
        self._cursor_block, self._cursor_at = i, block.start
        self._cursor_line, self._cursor_col = block.line, block.col
        self._cursor_bytes = None

    def _whole_line(self, data: RgTail) -> Finding:
        # PCRE2's \K can leave a match without submatches: the lines are the finding, and then
        # the output holds the whole line anyway.
        assert self._file is not None
        self._file.seek(0)
        return whole_lines_finding(
            self._path, self._file.read(), data.line_number, data.absolute_offset
        )
