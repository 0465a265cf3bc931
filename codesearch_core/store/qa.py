"""The QA queue's items in the store (table `qa_items`, schema v15): a data set's QA sample, one
row per sampled item, reviewed like any queue (`store.queue_kinds`, kind "qa"). Accept says the
item is correct, reject that it is not; the settled decisions are the data set's verdicts, which
`dataset.sample` turns into the card's estimate.

Sampling the same data set again replaces the items nobody decided anything on yet and keeps the
others, with their decisions, so a resample never loses a reviewer's work.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import duckdb

from codesearch_core.models import canonical_json
from codesearch_core.store.rows import first_row

Cursor = duckdb.DuckDBPyConnection

#: A QA item's settled state as a verdict on the item: accept = correct, reject = incorrect.
VERDICTS: Final = {"accept": True, "reject": False}


@dataclass(frozen=True, slots=True)
class QADataset:
    """Which data set a QA sample is of: `dataset_id` (a hash of its data files), its name, the
    folder it was sampled from and its card's recipe sha256."""

    dataset_id: str
    name: str
    folder: str
    recipe_sha256: str


@dataclass(frozen=True, slots=True)
class QAItem:
    """One sampled item in the QA queue, with its review state (None: open)."""

    qa_id: str
    dataset: QADataset
    item_id: str
    stratum: str
    item: Mapping[str, Any]
    decision: str | None = None
    n_votes: int = 0


@dataclass(frozen=True, slots=True)
class QAImport:
    """What sampling into the queue did: items `added`, open items nobody had decided on that the
    new sample left out (`removed`), items already queued and sampled again (`unchanged`), and items
    `kept` because someone decided on them (sampled again or not: their decisions count)."""

    added: int
    removed: int
    unchanged: int
    kept: int


def qa_id_of(dataset_id: str, item_id: str) -> str:
    # "." is unreserved in an address: `?item=` shows the id as it is.
    return f"{dataset_id}.{item_id}"


def import_sample(
    cur: Cursor,
    dataset: QADataset,
    items: Sequence[tuple[str, Mapping[str, Any]]],
    *,
    at: datetime,
) -> QAImport:
    """Put a data set's sample, (stratum, item) pairs, in the queue. Items with any decision
    event (a vote, a skip, even one undone: their history stays readable) are kept; the others
    the new sample leaves out are removed. Every queued item sampled again takes its new stratum
    (a resample may stratify by other fields)."""
    queued = {
        str(r[0]): bool(r[1])
        for r in cur.execute(
            "SELECT q.qa_id, EXISTS (SELECT 1 FROM decisions d WHERE d.kind = 'qa' "
            "AND d.item_id = q.qa_id) FROM qa_items q WHERE q.dataset_id = ?",
            [dataset.dataset_id],
        ).fetchall()
    }
    sampled = {qa_id_of(dataset.dataset_id, str(item["id"])): (stratum, item)
               for stratum, item in items}  # fmt: skip
    gone = sorted(q for q, decided in queued.items() if not decided and q not in sampled)
    if gone:
        cur.execute(
            "DELETE FROM leases WHERE kind = 'qa' AND list_contains(?::VARCHAR[], item_id)", [gone]
        )
        cur.execute("DELETE FROM qa_items WHERE list_contains(?::VARCHAR[], qa_id)", [gone])
    new = [
        (qa_id, dataset.dataset_id, dataset.name, dataset.folder, dataset.recipe_sha256,
         str(item["id"]), stratum, canonical_json(dict(item)), at)
        for qa_id, (stratum, item) in sampled.items()
        if qa_id not in queued
    ]  # fmt: skip
    if new:
        cur.executemany(
            "INSERT INTO qa_items (qa_id, dataset_id, dataset_name, dataset_dir, recipe_sha256, "
            "item_id, stratum, item, sampled_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            new,
        )
    again = [(stratum, qa_id) for qa_id, (stratum, _) in sampled.items() if qa_id in queued]
    if again:
        cur.executemany(
            "UPDATE qa_items SET stratum = ?, version = version + 1 WHERE qa_id = ?", again
        )
    cur.execute(
        "UPDATE qa_items SET dataset_dir = ? WHERE dataset_id = ?",
        [dataset.folder, dataset.dataset_id],
    )
    decided = sum(queued.values())
    unchanged = sum(1 for q in sampled if q in queued and not queued[q])
    return QAImport(added=len(new), removed=len(gone), unchanged=unchanged, kept=decided)


_SELECT: Final = (
    "qa_id, dataset_id, dataset_name, dataset_dir, recipe_sha256, item_id, stratum, "
    "CAST(item AS VARCHAR), decision, n_votes"
)


def _item(row: Sequence[Any]) -> QAItem:
    return QAItem(
        qa_id=str(row[0]),
        dataset=QADataset(str(row[1]), str(row[2]), str(row[3]), str(row[4])),
        item_id=str(row[5]),
        stratum=str(row[6]),
        item=json.loads(row[7]),
        decision=row[8],
        n_votes=int(row[9] or 0),
    )


def get_item(cur: Cursor, qa_id: str) -> QAItem | None:
    row = first_row(cur.execute(f"SELECT {_SELECT} FROM qa_items WHERE qa_id = ?", [qa_id]))
    return None if row is None else _item(row)


def dataset_items(cur: Cursor, dataset_id: str) -> list[QAItem]:
    """The queued items of a data set, in the order they were sampled."""
    rows = cur.execute(
        f"SELECT {_SELECT} FROM qa_items WHERE dataset_id = ? ORDER BY seq", [dataset_id]
    ).fetchall()
    return [_item(r) for r in rows]


def settled_verdicts(items: Sequence[QAItem]) -> dict[str, bool]:
    """The verdicts the queue settled, by item id: accepted items are correct, rejected ones
    incorrect; open items and those in conflict are no verdict yet."""
    return {i.item_id: VERDICTS[i.decision] for i in items if i.decision in VERDICTS}
