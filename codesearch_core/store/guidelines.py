"""The project's annotation guidelines: Markdown a lead writes, versioned (every save is a new
version, with who and when), shown on every review card; each decision keeps the version it was
made under (`decisions.guideline_version`, filled where the decision is inserted).

Functions take a cursor inside the caller's transaction; `ReviewToolsStore` supplies it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

import duckdb

from codesearch_core.errors import StoreError
from codesearch_core.store.rows import first_row

Cursor = duckdb.DuckDBPyConnection

#: Longer than any guide a reviewer reads on a card; a pasted binary file is refused, not stored.
MAX_GUIDELINES_CHARS: Final = 100_000
#: The version now in force, as a scalar subquery for the INSERT of a decision.
CURRENT_VERSION_SQL: Final = "(SELECT max(version) FROM guidelines)"


@dataclass(frozen=True, slots=True)
class Guidelines:
    """One saved version of the guidelines."""

    version: int
    text: str
    author: str
    saved_at: datetime


def check_text(text: str) -> str:
    """The text to save, with its line ends made one kind; a StoreError for text that cannot be
    guidelines (empty, too long, binary)."""
    text = text.replace("\r\n", "\n").strip()
    if not text:
        raise StoreError("the guidelines are empty: write what reviewers should follow")
    if len(text) > MAX_GUIDELINES_CHARS:
        raise StoreError(
            f"the guidelines have {len(text):,} characters, more than the {MAX_GUIDELINES_CHARS:,} "
            "a card can show; link a longer document from them instead"
        )
    if "\x00" in text:
        raise StoreError("the guidelines hold a NUL character: is this a binary file?")
    return text + "\n"


def current(cur: Cursor) -> Guidelines | None:
    """The version in force (the newest), or None before any was written."""
    row = first_row(
        cur.execute(
            "SELECT version, text, author, saved_at FROM guidelines ORDER BY version DESC LIMIT 1"
        )
    )
    return None if row is None else Guidelines(int(row[0]), str(row[1]), str(row[2]), row[3])


def get(cur: Cursor, version: int) -> Guidelines | None:
    row = first_row(
        cur.execute(
            "SELECT version, text, author, saved_at FROM guidelines WHERE version = ?", [version]
        )
    )
    return None if row is None else Guidelines(int(row[0]), str(row[1]), str(row[2]), row[3])


def versions(cur: Cursor) -> list[Guidelines]:
    """Every saved version, newest first."""
    rows = cur.execute(
        "SELECT version, text, author, saved_at FROM guidelines ORDER BY version DESC"
    ).fetchall()
    return [Guidelines(int(v), str(t), str(a), at) for v, t, a, at in rows]


def save(cur: Cursor, text: str, author: str, *, at: datetime) -> Guidelines | None:
    """Save `text` as the next version; None (nothing written) when it is the version in force."""
    text = check_text(text)
    now = current(cur)
    if now is not None and now.text == text:
        return None
    saved = Guidelines((now.version if now else 0) + 1, text, author, at)
    # Two leads saving at once both compute the same next version: the primary key refuses one,
    # and the store retries it on the new state.
    cur.execute(
        "INSERT INTO guidelines VALUES (?, ?, ?, ?)",
        [saved.version, saved.text, saved.author, saved.saved_at],
    )
    return saved
