"""A reviewer's to-do set in one kind's queue, read without touching every open item's id.

An item is to do for a reviewer when it is open (no decision, fewer votes than the reviews it
needs), they have not voted on it, and others (their votes plus their live leases) have not
already taken up every review it needs. Written as one SQL filter, that is two anti-joins over
the open items' ids: DuckDB then reads and hashes every id (64 characters each; 10 ms at 100k
episodes, the most of the card's store time in `bench_episode_card.py`). Here only the integer
columns are read for every open item; ids are read for the few items that can be excluded (the
reviewer's votes on items still open, the items others hold leases on) and for a small window of
the queue's first open items, looked up through the primary key.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Final

import duckdb

from codesearch_core.store.queue_kinds import KINDS
from codesearch_core.store.rows import first_row

Cursor = duckdb.DuckDBPyConnection

#: Open items looked at first when picking the next one; widened eightfold while all are taken.
#: Up to 50, DuckDB reads the ids of the top rows only (its late materialization).
WINDOW: Final = 50


def _marks(n: int) -> str:
    return ", ".join("?" * n)


def _voted(cur: Cursor, kind: str, reviewer: str, ids: Sequence[str]) -> set[str]:
    """Those of `ids` the reviewer voted on."""
    rows = cur.execute(
        f"SELECT item_id FROM votes WHERE kind = ? AND reviewer = ? AND item_id IN "
        f"({_marks(len(ids))})",
        [kind, reviewer, *ids],
    ).fetchall()
    return {str(r[0]) for r in rows}


def _held(
    cur: Cursor, kind: str, reviewer: str, now: datetime, ids: Sequence[str]
) -> dict[str, int]:
    """Of `ids`, how many live leases others hold on each (those with any)."""
    rows = cur.execute(
        "SELECT item_id, count(*) FROM leases WHERE kind = ? AND reviewer <> ? "
        f"AND expires_at > ? AND item_id IN ({_marks(len(ids))}) GROUP BY item_id",
        [kind, reviewer, now, *ids],
    ).fetchall()
    return {str(r[0]): int(r[1]) for r in rows}


def _to_do_among(
    cur: Cursor,
    kind: str,
    reviewer: str,
    now: datetime,
    reviews: int,
    rows: Sequence[tuple[str, int]],
) -> list[str]:
    """Of open items `(id, votes)`, in their order, those still to do for `reviewer`."""
    if not rows:
        return []
    ids = [r[0] for r in rows]
    voted, held = _voted(cur, kind, reviewer, ids), _held(cur, kind, reviewer, now, ids)
    return [i for i, votes in rows if i not in voted and votes + held.get(i, 0) < reviews]


def _open_rows(
    cur: Cursor,
    kind: str,
    reviews: int,
    *,
    ids: Sequence[str] | None = None,
    limit: int | None = None,
) -> list[tuple[str, int]]:
    """Open items of `kind` in queue order, `(id, votes)`: those among `ids` (None: any), the
    first `limit` of them (None: all)."""
    if ids is not None and not ids:
        return []
    k = KINDS[kind]
    among = "" if ids is None else f"AND p.{k.id_column} IN ({_marks(len(ids))})"
    rows = cur.execute(
        f"SELECT p.{k.id_column}, p.n_votes FROM {k.table} p WHERE p.decision IS NULL AND "
        f"p.n_votes < ? {among} ORDER BY {k.order_sql}{'' if limit is None else ' LIMIT ?'}",
        [reviews, *(ids or ()), *([] if limit is None else [limit])],
    ).fetchall()
    return [(str(r[0]), int(r[1])) for r in rows]


def next_to_do(cur: Cursor, kind: str, reviewer: str, now: datetime, reviews: int) -> str | None:
    """The item `reviewer` should review next: one already leased to them (a reload resumes it),
    else the first in queue order; None when nothing is left for them."""
    own = [
        str(r[0])
        for r in cur.execute(
            "SELECT item_id FROM leases WHERE kind = ? AND reviewer = ? AND expires_at > ?",
            [kind, reviewer, now],
        ).fetchall()
    ]
    mine = _to_do_among(cur, kind, reviewer, now, reviews, _open_rows(cur, kind, reviews, ids=own))
    if mine:
        return mine[0]
    size = WINDOW
    while True:
        rows = _open_rows(cur, kind, reviews, limit=size)
        found = _to_do_among(cur, kind, reviewer, now, reviews, rows)
        if found:
            return found[0]
        if len(rows) < size:
            return None  # the window held every open item
        size *= 8


def count_to_do(cur: Cursor, kind: str, reviewer: str, now: datetime, reviews: int) -> int:
    """How many items are still to do for `reviewer` (as `next_to_do` would go through them)."""
    k = KINDS[kind]
    # Open items, less those the reviewer voted on. An item they accepted or rejected has that
    # vote, so only items with 1 <= votes < reviews are read for those (none when one review
    # settles an item); their skips (rare) are not votes that count and are looked up as they are.
    row = first_row(
        cur.execute(
            f"SELECT (SELECT count(*) FROM {k.table} p WHERE p.decision IS NULL AND p.n_votes < ?), "
            f"(SELECT count(*) FROM {k.table} p WHERE p.decision IS NULL AND p.n_votes >= 1 "
            f"AND p.n_votes < ? AND p.{k.id_column} IN (SELECT item_id FROM votes WHERE "
            "kind = ? AND reviewer = ? AND action <> 'skip')), "
            f"(SELECT count(*) FROM {k.table} p WHERE p.decision IS NULL AND p.n_votes < ? "
            f"AND p.{k.id_column} IN (SELECT item_id FROM votes WHERE kind = ? AND reviewer = ? "
            "AND action = 'skip'))",
            [reviews, reviews, kind, reviewer, reviews, kind, reviewer],
        )
    )
    assert row is not None
    open_items, voted = int(row[0]), int(row[1]) + int(row[2])
    # ...less those others have taken up (the items they hold live leases on: a few). The leases
    # are read once: a count is a read outside any transaction, and a second read could miss a
    # lease given back in between.
    leases = {
        str(r[0]): int(r[1])
        for r in cur.execute(
            "SELECT item_id, count(*) FROM leases WHERE kind = ? AND reviewer <> ? "
            "AND expires_at > ? GROUP BY item_id",
            [kind, reviewer, now],
        ).fetchall()
    }
    rows = _open_rows(cur, kind, reviews, ids=list(leases))
    mine = _voted(cur, kind, reviewer, [r[0] for r in rows]) if rows else set()
    taken = sum(1 for i, votes in rows if i not in mine and votes + leases[i] >= reviews)
    # Its statements may see others' writes land between them: a figure for a progress bar,
    # never below nothing.
    return max(open_items - voted - taken, 0)
