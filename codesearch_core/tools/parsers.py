"""Stream parsers: the JSON lines `rg --json` and `ast-grep --json=stream` print -> Findings.

Pure and incremental: `feed()` takes any chunk of bytes (a pipe read), parses the complete lines in
it and keeps the rest, so the runner parses while the tool is still searching and never holds the
whole output. Decoding is msgspec with typed structs that name only the fields we use (the rest is
skipped without being built), over a whole chunk per call (`decode_lines`).

Normalization (see `Finding`):
- One Finding per rg *submatch* (a line with two matches gives two Findings), so findings line up
  with ast-grep's one-per-node and grading can count matches, not lines. Context lines (`-C`) are
  not findings.
- `text` is the matched text (not the whole line).
- Lines are 1-based; columns are 1-based *character* columns; `end_col` is exclusive (one past the
  last character), so a one-line match has `end_col - start_col == len(text)`.
- `end_line` is the line of the last matched character: a multiline match that ends with its
  newline does not spill onto the next line. Both tools follow this rule.
- Paths are relative POSIX paths with no leading `./`. Bytes that are not UTF-8 (in a path or a
  line) are decoded with U+FFFD replacement, as ast-grep prints them, so both tools name a file
  the same way.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Final, TypeVar

import msgspec

from codesearch_core.errors import ToolOutputError
from codesearch_core.models import Finding
from codesearch_core.tools.line_file import whole_lines_finding
from codesearch_core.tools.long_lines import LONG_MESSAGE_BYTES, LongMessage

# --- rg --json ---------------------------------------------------------------------------------
# `path` and `lines` are {"text": ...} or, when not UTF-8, {"bytes": base64}. Submatch `start` and
# `end` are byte offsets into `lines`; `absolute_offset` is the byte offset of `lines` in the file.


class _RgData(msgspec.Struct, gc=False):
    text: str | None = None
    bytes: str | None = None


class _RgSubmatch(msgspec.Struct, gc=False):
    start: int
    end: int


class _RgMatchData(msgspec.Struct, gc=False):
    lines: _RgData
    line_number: int
    absolute_offset: int
    submatches: list[_RgSubmatch]


class _RgMatch(msgspec.Struct, tag="match", tag_field="type", gc=False):
    data: _RgMatchData


class _RgBeginData(msgspec.Struct, gc=False):
    path: _RgData


# rg prints each file's messages together (begin, matches, end, even with many threads), so the
# path is read once from `begin` instead of being decoded again for every match.
class _RgBegin(msgspec.Struct, tag="begin", tag_field="type", gc=False):
    data: _RgBeginData


# The other message types carry nothing we use: no fields, so their `data` is skipped unbuilt.
class _RgEnd(msgspec.Struct, tag="end", tag_field="type", gc=False):
    pass


class _RgContext(msgspec.Struct, tag="context", tag_field="type", gc=False):
    pass


class _RgSummary(msgspec.Struct, tag="summary", tag_field="type", gc=False):
    pass


_RgMessage = _RgMatch | _RgBegin | _RgEnd | _RgContext | _RgSummary

# --- ast-grep --json=stream --------------------------------------------------------------------
# One object per match; lines and columns are 0-based (columns count characters), `byteOffset`
# is the byte range in the file.


class _AgPosition(msgspec.Struct, gc=False):
    line: int
    column: int


class _AgByteRange(msgspec.Struct, gc=False):
    start: int
    end: int


class _AgRange(msgspec.Struct, gc=False):
    byteOffset: _AgByteRange  # ast-grep's field name
    start: _AgPosition
    end: _AgPosition


class _AgMatch(msgspec.Struct, gc=False):
    text: str
    range: _AgRange
    file: str


_RG_DECODER: Final[msgspec.json.Decoder[_RgMessage]] = msgspec.json.Decoder(_RgMessage)
_AG_DECODER: Final[msgspec.json.Decoder[_AgMatch]] = msgspec.json.Decoder(_AgMatch)
_T = TypeVar("_T")


def strip_dot_slash(path: str) -> str:
    """`./a/b.py` -> `a/b.py`: how tools print paths under an explicit `.` argument."""
    while path.startswith("./"):
        path = path[2:]
    return path


def _b64(b64: str) -> bytes:
    return base64.b64decode(b64)


def _rg_general(
    path: str,
    raw: bytes,
    line_number: int,
    offset: int,
    submatches: Iterable[_RgSubmatch],
    append: Callable[[Finding], None],
) -> None:
    """Findings of one `match` message whose `raw` lines may hold newlines or non-ASCII bytes.

    Submatches come left to right, so a cursor (line, characters since that line's start) moves
    forward through `raw` and every byte is decoded about once: a minified 1 MB line with a
    thousand matches costs one pass, not a thousand prefix decodes.
    """
    pos = 0  # byte position of the cursor in raw; raw starts at the start of a line
    line = line_number
    col = 0  # characters between the start of `line` and pos
    for sm in submatches:
        s = sm.start
        e = sm.end
        if s < pos:  # not left to right after all: restart from the top
            pos, line, col = 0, line_number, 0
        gap = raw[pos:s]
        newlines = gap.count(b"\n")
        if newlines:
            line += newlines
            col = len(gap[gap.rfind(b"\n") + 1 :].decode("utf-8", "replace"))
        else:
            col += len(gap.decode("utf-8", "replace"))
        pos = s
        matched = raw[s:e]
        text = matched.decode("utf-8", "replace")
        # The end is placed after the last matched character: a match that ends with its
        # newline ends on that newline's line.
        inner = matched.rfind(b"\n", 0, len(matched) - 1)
        if inner < 0:
            end_line, end_col = line, col + len(text)
        else:
            end_line = line + matched.count(b"\n", 0, len(matched) - 1)
            end_col = len(matched[inner + 1 :].decode("utf-8", "replace"))
        append(
            Finding(path, line, col + 1, end_line, end_col + 1, offset + s, offset + e, text, None)
        )


def _rg_path(data: _RgData) -> str:
    raw = data.text
    if raw is None:
        raw = _b64(data.bytes or "").decode("utf-8", "replace")
    return strip_dot_slash(raw)


def ripgrep_findings(
    messages: Iterable[_RgMessage], path: str, out: list[Finding], multiline: bool = True
) -> str:
    """Append one Finding per submatch of the rg `match` messages to `out`.

    `path` is the file of the last `begin` seen before `messages` (a chunk can start mid-file); the
    return value is the one to pass with the next chunk. `multiline=False` promises that every
    `lines` is a single line (rg without `-U`).
    """
    append = out.append
    for msg in messages:
        if type(msg) is not _RgMatch:
            if type(msg) is _RgBegin:
                path = _rg_path(msg.data.path)
            continue
        data = msg.data
        text = data.lines.text
        line_number = data.line_number
        offset = data.absolute_offset
        if not data.submatches:
            # PCRE2's \K can move a match's start before where rg looks for it in `lines`: rg then
            # reports the lines as matching with no submatch (and prints them). The lines are the
            # finding, as bare `rg -n` shows them.
            raw = text.encode("utf-8") if text is not None else _b64(data.lines.bytes or "")
            append(whole_lines_finding(path, raw, line_number, offset))
            continue
        # Fast path: an ASCII line without an inner newline, where bytes are characters.
        if (
            text is not None
            and text.isascii()
            and (not multiline or text.find("\n", 0, len(text) - 1) < 0)
        ):
            for sm in data.submatches:
                s = sm.start
                e = sm.end
                append(
                    Finding(
                        path, line_number, s + 1, line_number, e + 1, offset + s, offset + e,
                        text[s:e], None,
                    )
                )  # fmt: skip
            continue
        raw = text.encode("utf-8") if text is not None else _b64(data.lines.bytes or "")
        _rg_general(path, raw, line_number, offset, data.submatches, append)
    return path


def _ast_grep_finding(m: _AgMatch, language: str | None) -> Finding:
    r = m.range
    start, end = r.start, r.end
    text = m.text
    end_line = end.line + 1
    end_col = end.column + 1
    if end.column == 0 and end.line > start.line and text.endswith("\n"):
        # The node ends with its newline: end on that line, like rg (see module docstring).
        body = text[:-1]
        nl = body.rfind("\n")
        end_line = end.line
        end_col = (len(body) - nl - 1 if nl >= 0 else start.column + len(body)) + 2
    return Finding(
        strip_dot_slash(m.file),
        start.line + 1,
        start.column + 1,
        end_line,
        end_col,
        r.byteOffset.start,
        r.byteOffset.end,
        text,
        language,
    )


class _LineStream:
    """Splits a byte stream into complete JSON lines; the partial last line waits for more.

    The partial line is kept as a list of pieces and joined once, when its newline arrives: a
    50 MB line (a minified bundle's match) comes in hundreds of reads, and re-joining what was
    kept on every read made that quadratic. Each chunk is searched for a newline once.
    """

    def __init__(self, tool: str) -> None:
        self._tool = tool
        self._pieces: list[bytes] = []
        self.pending = 0  # bytes of the partial line

    def take(self, chunk: bytes) -> bytes:
        cut = chunk.rfind(b"\n") + 1
        if not cut:  # still inside one line
            self._pieces.append(chunk)
            self.pending += len(chunk)
            return b""
        if self._pieces:
            self._pieces.append(chunk[:cut])
            lines = b"".join(self._pieces)
            self._pieces = []
        else:
            lines = chunk[:cut] if cut < len(chunk) else chunk
        self.pending = len(chunk) - cut
        if cut < len(chunk):
            self._pieces.append(chunk[cut:])
        return lines

    def rest(self) -> bytes:
        rest = b"".join(self._pieces)
        self._pieces = []
        self.pending = 0
        return rest

    def decode(self, decoder: msgspec.json.Decoder[_T], lines: bytes) -> list[_T]:
        try:
            return decoder.decode_lines(lines)
        except (msgspec.DecodeError, msgspec.ValidationError) as err:
            raise ToolOutputError(
                f"{self._tool} printed output that is not the expected JSON: {err} "
                f"(near {bytes(lines[:200])!r})"
            ) from None


class RipgrepParser:
    """Incremental parser for `rg --json` output."""

    def __init__(self, *, multiline: bool = True, root: Path | None = None) -> None:
        self._lines = _LineStream("rg")
        self._path = ""
        # Without `rg -U` every `lines` is one line; knowing it skips a scan of each line.
        self._multiline = multiline
        # Where rg runs: a very long line is then read from its file (tools.long_lines).
        self._root = root
        self._long: LongMessage | None = None  # a message too long to hold, being streamed

    def feed(self, chunk: bytes) -> list[Finding]:
        """Findings from the complete lines in `chunk` (plus what earlier chunks left over)."""
        out: list[Finding] = []
        if self._long is not None:
            after = self._long.feed(chunk)
            if after is None:
                return out
            out += self._long.findings()
            self._long = None
            chunk = after
        lines = self._lines.take(chunk)
        if lines:
            messages = self._lines.decode(_RG_DECODER, lines)
            self._path = ripgrep_findings(messages, self._path, out, self._multiline)
        if self._lines.pending > LONG_MESSAGE_BYTES:
            # A minified bundle's line: stream the rest of this message (tools.long_lines).
            self._long = LongMessage(self._path, self._root, multiline=self._multiline)
            self._long.feed(self._lines.rest())
        return out

    def close(self) -> list[Finding]:
        """Findings from a last line that had no newline (nothing when the output ended cleanly)."""
        if self._long is not None:
            long, self._long = self._long, None
            return self._finish(long)
        rest = self._lines.rest()
        return self.feed(rest + b"\n") if rest.strip() else []

    @staticmethod
    def _finish(long: LongMessage) -> list[Finding]:
        # rg ended its output inside a long message: the newline it did not print ends it.
        if long.feed(b"\n") is None:
            raise ToolOutputError("rg's output ended inside a match message")
        return long.findings()


class AstGrepParser:
    """Incremental parser for `ast-grep --json=stream` output; `language` is stored on Findings."""

    def __init__(self, language: str | None = None) -> None:
        self._lines = _LineStream("ast-grep")
        self._language = language

    def feed(self, chunk: bytes) -> list[Finding]:
        lines = self._lines.take(chunk)
        if not lines:
            return []
        language = self._language
        return [_ast_grep_finding(m, language) for m in self._lines.decode(_AG_DECODER, lines)]

    def close(self) -> list[Finding]:
        """Findings from a last line that had no newline (nothing when the output ended cleanly)."""
        rest = self._lines.rest()
        return self.feed(rest + b"\n") if rest.strip() else []


def parse_ripgrep_json(output: bytes) -> list[Finding]:
    """All Findings in a complete `rg --json` output, in the order rg printed them."""
    parser = RipgrepParser()
    return parser.feed(output) + parser.close()


def parse_ast_grep_json(output: bytes, language: str | None = None) -> list[Finding]:
    """All Findings in a complete `ast-grep --json=stream` output, in printed order."""
    parser = AstGrepParser(language)
    return parser.feed(output) + parser.close()
