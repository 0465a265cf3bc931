"""Pinning and drift: which stored blueprints and runs were made on another corpus snapshot or by
other tool versions, and the `drift` table where `codesearch verify --stale` puts the items whose
findings changed. Each function takes a cursor; `Store` (`store.drift`, `store.parts`) supplies it.

A run records the snapshot of its corpus and the tool versions when it is stored
(`writes.record_executions`); a blueprint records the snapshot its expected spans were checked on
(`stamped`). Stale means "recorded other than now", NULL included: rows stored before pinning are
all stale once, and re-checking them records the current snapshot.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Final

import duckdb

from codesearch_core.corpora import current_snapshot
from codesearch_core.errors import CorpusError
from codesearch_core.models import Blueprint, Span
from codesearch_core.store.rows import BLUEPRINT_SELECT, blueprint_from_row

Cursor = duckdb.DuckDBPyConnection

#: A drift item is open until the Drift queue settles it: its state is the queue's (`decision`,
#: kept by `store.decisions`), and so is who resolved it. The v9 columns `resolution`,
#: `resolved_by` and `resolved_at` are no longer written.
OPEN_DRIFT_SQL: Final = "decision IS NULL"
#: An accepted item is held out of exports while it is in open drift (over the proposal `p`).
NOT_IN_DRIFT_SQL: Final = (
    f"p.id NOT IN (SELECT item_id FROM drift WHERE kind = 'proposal' AND {OPEN_DRIFT_SQL})"
)
#: A settled item's answer in the Drift card's words (`queue_kinds.DRIFT_RESOLUTIONS` in SQL): A
#: keeps an accepted proposal or takes a reference's new findings.
_RESOLUTION_SQL: Final = (
    "CASE WHEN decision IS NULL OR decision = 'conflict' THEN NULL "
    "WHEN kind = 'proposal' THEN (CASE decision WHEN 'accept' THEN 'kept' ELSE 'rejected' END) "
    "ELSE (CASE decision WHEN 'accept' THEN 'updated' ELSE 'kept' END) END"
)


def corpus_snapshot(corpus: str) -> str | None:
    """The snapshot id of `corpus` as it is now; None when there is no such corpus folder (a
    blueprint imported before its corpus was added)."""
    try:
        return current_snapshot(corpus)
    except CorpusError:
        return None


def stamped(blueprints: Sequence[Blueprint]) -> list[Blueprint]:
    """Blueprints with the snapshot they are stored against: the one they name (a seed pins the
    snapshot its spans were checked on), else the corpus as it is now (an author checked the
    spans in the studio just before saving)."""
    now: dict[str, str | None] = {}
    out = []
    for bp in blueprints:
        if bp.snapshot is None:
            if bp.corpus not in now:
                now[bp.corpus] = corpus_snapshot(bp.corpus)
            bp = replace(bp, snapshot=now[bp.corpus])
        out.append(bp)
    return out


@dataclass(frozen=True, slots=True)
class StaleRun:
    """An accepted proposal whose stored run was made on another snapshot or tool versions."""

    proposal_id: str
    call_json: str
    blueprint: Blueprint
    findings: tuple[Span, ...]
    snapshot: str | None
    tool_versions: str | None


@dataclass(frozen=True, slots=True)
class DriftItem:
    """An item whose findings changed on re-checking, before and after."""

    item_id: str
    kind: str  # "proposal" or "reference"
    blueprint_id: str
    old_findings: tuple[Span, ...]
    new_findings: tuple[Span, ...]
    old_snapshot: str | None
    new_snapshot: str | None
    old_tools: str | None
    new_tools: str | None
    found_at: datetime
    resolution: str | None = None
    resolved_by: str | None = None


def spans_of(findings_json: str) -> tuple[Span, ...]:
    """The spans of stored findings (or of stored expected spans), sorted."""
    return tuple(
        sorted(
            {
                Span(str(f["path"]), int(f["start_line"]), int(f["end_line"]))
                for f in json.loads(findings_json)
            }
        )
    )


def spans_json(spans: Sequence[Span]) -> str:
    return json.dumps([s.to_dict() for s in sorted(spans)], separators=(",", ":"))


def stale_references(
    cur: Cursor, snapshots: Mapping[str, str | None], versions: str
) -> list[Blueprint]:
    """Blueprints of the corpora in `snapshots` whose snapshot is not the corpus's current one, or
    whose spans other tool versions checked, and that are not already in open drift."""
    out = []
    rows = cur.execute(
        f"SELECT CAST(b.tool_versions AS VARCHAR), {BLUEPRINT_SELECT} FROM blueprints b "
        "WHERE b.corpus IN (SELECT unnest(?::VARCHAR[])) "
        f"AND b.id NOT IN (SELECT item_id FROM drift WHERE {OPEN_DRIFT_SQL}) ORDER BY b.seq",
        [list(snapshots)],
    ).fetchall()
    for tools, *row in rows:
        bp = blueprint_from_row(row)
        if bp.corpus not in snapshots:
            continue
        if bp.snapshot != snapshots[bp.corpus] or _tools(tools) != _tools(versions):
            out.append(bp)
    return out


def stale_accepted(
    cur: Cursor, snapshots: Mapping[str, str | None], versions: str
) -> list[StaleRun]:
    """Accepted proposals whose run's snapshot or tool versions are not the current ones."""
    rows = cur.execute(
        f"SELECT p.id, p.call, e.findings, e.snapshot_id, CAST(e.tool_versions AS VARCHAR), "
        f"{BLUEPRINT_SELECT} FROM proposals p "
        "JOIN executions e ON e.proposal_seq = p.seq "
        "JOIN blueprints b ON b.seq = p.blueprint_seq "
        "WHERE p.decision = 'accept' AND p.call IS NOT NULL AND e.ok "
        "AND b.corpus IN (SELECT unnest(?::VARCHAR[])) "
        f"AND p.id NOT IN (SELECT item_id FROM drift WHERE {OPEN_DRIFT_SQL}) ORDER BY p.seq",
        [list(snapshots)],
    ).fetchall()
    out = []
    for pid, call, findings, snapshot, tools, *bp_row in rows:
        bp = blueprint_from_row(bp_row)
        if bp.corpus not in snapshots:
            continue
        if snapshot != snapshots[bp.corpus] or _tools(tools) != _tools(versions):
            out.append(StaleRun(pid, str(call), bp, spans_of(findings), snapshot, tools))
    return out


def _tools(text: str | None) -> dict[str, str] | None:
    return None if text is None else dict(json.loads(text))


def mark_reference_current(
    cur: Cursor, blueprint_id: str, snapshot: str | None, versions: str
) -> None:
    """The reference still finds the expected spans on this snapshot with these tools: record it."""
    cur.execute(
        "UPDATE blueprints SET snapshot_id = ?, tool_versions = ? WHERE id = ?",
        [snapshot, versions, blueprint_id],
    )


def add_drift(cur: Cursor, item: DriftItem) -> None:
    """Put an item in drift (replacing a resolved drift of the same item: a new drift is a new
    question, so the old one's votes and leases go; its decisions stay in the log)."""
    cur.execute("DELETE FROM votes WHERE kind = 'drift' AND item_id = ?", [item.item_id])
    cur.execute("DELETE FROM leases WHERE kind = 'drift' AND item_id = ?", [item.item_id])
    cur.execute(
        "INSERT OR REPLACE INTO drift (item_id, kind, blueprint_id, old_findings, new_findings, "
        "old_snapshot, new_snapshot, old_tools, new_tools, found_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            item.item_id,
            item.kind,
            item.blueprint_id,
            spans_json(item.old_findings),
            spans_json(item.new_findings),
            item.old_snapshot,
            item.new_snapshot,
            item.old_tools,
            item.new_tools,
            item.found_at,
        ],
    )


_DRIFT_SELECT: Final = (
    "item_id, kind, blueprint_id, old_findings, new_findings, old_snapshot, new_snapshot, "
    "CAST(old_tools AS VARCHAR), CAST(new_tools AS VARCHAR), found_at, "
    f"{_RESOLUTION_SQL}, (SELECT d.reviewer FROM decisions d WHERE d.event_id = drift.decision_event_id)"
)


def _drift_from_row(row: Sequence[object]) -> DriftItem:
    return DriftItem(
        item_id=str(row[0]),
        kind=str(row[1]),
        blueprint_id=str(row[2]),
        old_findings=spans_of(str(row[3])),
        new_findings=spans_of(str(row[4])),
        old_snapshot=None if row[5] is None else str(row[5]),
        new_snapshot=None if row[6] is None else str(row[6]),
        old_tools=None if row[7] is None else str(row[7]),
        new_tools=None if row[8] is None else str(row[8]),
        found_at=row[9],  # type: ignore[arg-type]
        resolution=None if row[10] is None else str(row[10]),
        resolved_by=None if row[11] is None else str(row[11]),
    )


def open_drift(cur: Cursor, where: str = "TRUE", params: Sequence[Any] = ()) -> list[DriftItem]:
    """Items in drift that nobody decided yet, oldest first; `where` (over `p`, with `params`)
    narrows them."""
    rows = cur.execute(
        f"SELECT {_DRIFT_SELECT} FROM drift WHERE {OPEN_DRIFT_SQL} AND item_id IN "
        f"(SELECT p.item_id FROM drift p WHERE {where}) ORDER BY found_at, item_id",
        list(params),
    ).fetchall()
    return [_drift_from_row(r) for r in rows]


def get_drift(cur: Cursor, item_id: str) -> DriftItem | None:
    rows = cur.execute(f"SELECT {_DRIFT_SELECT} FROM drift WHERE item_id = ?", [item_id]).fetchall()
    return _drift_from_row(rows[0]) if rows else None


def drift_held_out(cur: Cursor) -> int:
    """Accepted proposals held out of exports because they are in open drift."""
    rows = cur.execute(
        "SELECT count(*) FROM drift d JOIN proposals p ON p.id = d.item_id "
        "WHERE d.kind = 'proposal' AND d.decision IS NULL AND p.decision = 'accept'"
    ).fetchall()
    return int(rows[0][0])
