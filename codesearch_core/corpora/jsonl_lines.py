"""Reading JSONL files a line at a time with bounded memory, for every importer.

A file from elsewhere may be huge or not JSONL at all (200 MB without a newline): no line is ever
held beyond `MAX_LINE_BYTES`, and a longer one is reported by number instead of read.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Final

from codesearch_core.errors import InputFileError

#: Far above any real record (the longest prompt stored with a proposal is a few kB).
MAX_LINE_BYTES: Final = 1024 * 1024


def open_jsonl(path: Path) -> BinaryIO:
    """The file opened for binary reading, or an InputFileError saying why it cannot be."""
    source = str(path)
    try:
        return path.open("rb")
    except FileNotFoundError:
        raise InputFileError("file not found: no such file or directory", source=source) from None
    except IsADirectoryError:
        raise InputFileError("is a directory, not a JSONL file", source=source) from None
    except OSError as err:
        raise InputFileError(f"cannot read: {err.strerror}", source=source) from None


def bounded_lines(handle: BinaryIO) -> Iterator[tuple[int, bytes | None]]:
    """(1-based line number, the line's bytes) per line; None for a line over `MAX_LINE_BYTES`,
    which is read past in pieces, never held whole."""
    number = 0
    while chunk := handle.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(chunk) <= MAX_LINE_BYTES or chunk.endswith(b"\n"):
            yield number, chunk
            continue
        yield number, None
        while chunk and not chunk.endswith(b"\n"):
            chunk = handle.readline(MAX_LINE_BYTES)


def line_too_long(record: str, *, source: str = "", line: int = 0) -> InputFileError:
    return InputFileError(
        f"line longer than {MAX_LINE_BYTES:,} bytes: one {record} per line is far shorter "
        "(is this a JSONL file?)",
        source=source,
        line=line,
    )
