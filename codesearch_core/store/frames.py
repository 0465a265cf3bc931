"""DataFrames for bulk inserts: DuckDB scans a registered frame ~300x faster than executemany."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

import pandas as pd

#: A code unit of a UTF-16 surrogate pair. In a Python str it is always alone (a pair is one code
#: point), which JSON allows (`"\ud800"`) and UTF-8, so DuckDB, cannot hold.
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def utf8_safe(value: Any) -> Any:
    """`value` with each lone surrogate written as its JSON escape (`\\ud800`), the way the
    imported file spelled it, so the text is kept and can be read back; other values unchanged."""
    if isinstance(value, str) and not value.isascii():
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", value)
    return value


def frame(columns: Sequence[str], rows: Sequence[list[Any] | tuple[Any, ...]]) -> pd.DataFrame:
    """A DataFrame DuckDB can scan: bulk inserts from one are ~300x faster than executemany.

    Text that UTF-8 cannot encode (a lone surrogate from an imported JSON file) is escaped and
    the frame built again: the common case pays nothing for the check.
    """
    try:
        frame = pd.DataFrame.from_records(list(rows), columns=list(columns))
    except UnicodeEncodeError:
        safe = [[utf8_safe(value) for value in row] for row in rows]
        frame = pd.DataFrame.from_records(safe, columns=list(columns))
    for name in ("prompt_tokens", "completion_tokens", "blueprint_seq"):
        if name in frame:
            frame[name] = pd.array(frame[name].tolist(), dtype="Int64")
    return frame
