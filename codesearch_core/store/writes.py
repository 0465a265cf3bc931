"""The store's writes. Each function runs inside the transaction `Store._write` opened for it, so
whatever it raises leaves nothing behind, and it may be run again whole after a write conflict.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Final

import duckdb
import msgspec
import pandas as pd

from codesearch_core.corpora import blueprint_to_dict
from codesearch_core.errors import StoreError
from codesearch_core.grading import score
from codesearch_core.models import (
    Blueprint,
    Grade,
    Proposal,
    Reward,
    RunResult,
    Span,
    canonical_json,
)
from codesearch_core.store.frames import frame
from codesearch_core.store.pinning import corpus_snapshot, stamped
from codesearch_core.store.rows import (
    BLUEPRINT_COLUMNS,
    BLUEPRINT_SELECT,
    EXECUTION_SELECT,
    PROPOSAL_COLUMNS,
    blueprint_from_row,
    blueprint_row,
    execution_from_row,
    first_row,
    proposal_id,
    proposal_row,
    utc_now,
)
from codesearch_core.store.schema import GRADING_KEY_SQL
from codesearch_core.store.types import BlueprintConflictError, ImportReport
from codesearch_core.tools import parse_tool_call, tool_versions_json

_FINDINGS_JSON: Final = msgspec.json.Encoder()


def add_blueprints(
    cur: duckdb.DuckDBPyConnection,
    blueprints: Sequence[Blueprint],
    *,
    source: str,
    skip_bad: bool,
) -> ImportReport:
    ids = [bp.id for bp in blueprints]
    hashes = [bp.content_hash for bp in blueprints]
    by_id: dict[str, str] = {}
    by_hash: dict[str, str] = {}
    if blueprints:
        cur.register("incoming_keys", pd.DataFrame({"id": ids, "content_hash": hashes}))
        by_id = dict(
            cur.execute(
                "SELECT b.id, b.content_hash FROM blueprints b JOIN incoming_keys i ON i.id = b.id"
            ).fetchall()
        )
        by_hash = dict(
            cur.execute(
                "SELECT b.content_hash, b.id FROM blueprints b "
                "JOIN incoming_keys i ON i.content_hash = b.content_hash"
            ).fetchall()
        )
        cur.unregister("incoming_keys")
    new: list[Blueprint] = []
    out_ids: list[str] = []
    errors: list[BlueprintConflictError] = []
    existing = 0
    for bp, content_hash in zip(blueprints, hashes, strict=True):
        stored_hash = by_id.get(bp.id)
        if stored_hash is not None and stored_hash != content_hash:
            err = BlueprintConflictError(bp.id, source=source)
            if not skip_bad:
                raise err
            errors.append(err)
            continue
        if stored_hash is not None:
            existing += 1
            out_ids.append(bp.id)
        elif content_hash in by_hash:
            existing += 1
            out_ids.append(by_hash[content_hash])
        else:
            new.append(bp)
            by_id[bp.id] = content_hash
            by_hash[content_hash] = bp.id
            out_ids.append(bp.id)
    if new:
        now = utc_now()
        new = stamped(new)
        _insert_blueprints(cur, new, source=source, now=now)
        _insert_revisions(cur, [(bp, 1) for bp in new], source=source, now=now)
    return ImportReport(
        source=source, new=len(new), existing=existing, errors=tuple(errors), ids=tuple(out_ids)
    )


def _insert_blueprints(
    cur: duckdb.DuckDBPyConnection, blueprints: Sequence[Blueprint], *, source: str, now: datetime
) -> None:
    rows = []
    for bp in blueprints:
        row = list(blueprint_row(bp, source=source, now=now))
        row[BLUEPRINT_COLUMNS.index("tags")] = json.dumps(list(bp.tags))
        rows.append(row)
    cur.register("incoming_blueprints", frame(BLUEPRINT_COLUMNS, rows))
    columns = ", ".join(BLUEPRINT_COLUMNS)
    select = ", ".join(
        "CAST(CAST(tags AS JSON) AS VARCHAR[])" if c == "tags" else c for c in BLUEPRINT_COLUMNS
    )
    cur.execute(f"INSERT INTO blueprints ({columns}) SELECT {select} FROM incoming_blueprints")
    cur.unregister("incoming_blueprints")


def _insert_revisions(
    cur: duckdb.DuckDBPyConnection,
    revisions: Sequence[tuple[Blueprint, int]],
    *,
    source: str,
    now: datetime,
) -> None:
    rows = [
        (bp.id, number, bp.content_hash, canonical_json(blueprint_to_dict(bp)), source, now)
        for bp, number in revisions
    ]
    cur.register(
        "incoming_revisions",
        frame(("blueprint_id", "revision", "content_hash", "data", "source", "changed_at"), rows),
    )
    cur.execute("INSERT INTO blueprint_revisions SELECT * FROM incoming_revisions")
    cur.unregister("incoming_revisions")


def _marked_spans(bp: Blueprint) -> Counter[tuple[Span, bool]]:
    return Counter((span, span.supporting) for span in bp.expected)


def upsert_blueprint(cur: duckdb.DuckDBPyConnection, bp: Blueprint, *, source: str) -> str:
    twin = first_row(
        cur.execute(
            "SELECT id FROM blueprints WHERE content_hash = ? AND id <> ?", [bp.content_hash, bp.id]
        )
    )
    if twin is not None:
        raise StoreError(
            f"blueprint {twin[0]!r} already has this intent, corpus and reference call; "
            "change one of them, or edit that blueprint instead"
        )
    row = first_row(
        cur.execute(
            f"SELECT {BLUEPRINT_SELECT} FROM blueprints b WHERE b.id = ?",
            [bp.id],
        )
    )
    now = utc_now()
    (bp,) = stamped([bp])
    if row is None:
        _insert_blueprints(cur, [bp], source=source, now=now)
        _insert_revisions(cur, [(bp, 1)], source=source, now=now)
        return "created"
    stored = blueprint_from_row(row)
    # Span equality leaves out the supporting mark, which changes the grade: compared here.
    new_spans = _marked_spans(stored) != _marked_spans(bp)
    if stored == replace(bp, pins=()) and not new_spans:  # pins: the seed file's, not the store's
        return "unchanged"
    regrade = stored.corpus == bp.corpus and new_spans
    if stored.corpus != bp.corpus:
        _forget_verification(cur, bp.id)
    values = blueprint_row(bp, source=source, now=now)
    updated = {
        c: v
        for c, v in zip(BLUEPRINT_COLUMNS, values, strict=True)
        if c not in ("id", "created_at")
    }
    assignments = ", ".join(f"{c} = ?" for c in updated)
    cur.execute(f"UPDATE blueprints SET {assignments} WHERE id = ?", [*updated.values(), bp.id])
    last = first_row(
        cur.execute(
            "SELECT coalesce(max(revision), 0) FROM blueprint_revisions WHERE blueprint_id = ?",
            [bp.id],
        )
    )
    _insert_revisions(cur, [(bp, int(last[0] if last else 0) + 1)], source=source, now=now)
    if regrade:
        _regrade(cur, bp)
    return "updated"


def _regrade(cur: duckdb.DuckDBPyConnection, bp: Blueprint) -> None:
    """Grade the stored runs of the blueprint's proposals again, against its new expected spans.

    A run depends on the call and the corpus only, so new expected spans need no new run: the
    grades are re-derived from the stored findings in this same transaction, and an accepted item
    keeps a current grade instead of waiting for the next verification.
    """
    _regrade_where(cur, "p.blueprint_id = ?", [bp.id], {bp.id: bp})


def regrade_stale(cur: duckdb.DuckDBPyConnection) -> int:
    """Grade again, from their stored runs, the grades made against another grading key (an older
    grading rule, or expected spans that changed under a running verification). Returns how many."""
    stale = (
        f"p.seq IN (SELECT g.proposal_seq FROM grades g JOIN proposals p2 ON p2.seq = "
        f"g.proposal_seq JOIN blueprints b ON b.seq = p2.blueprint_seq WHERE "
        f"g.graded_against IS DISTINCT FROM {GRADING_KEY_SQL})"
    )
    return _regrade_where(cur, stale, [], None)


def _regrade_where(
    cur: duckdb.DuckDBPyConnection,
    where: str,
    params: list[Any],
    blueprints: dict[str, Blueprint] | None,
) -> int:
    rows = cur.execute(
        f"SELECT p.seq, p.id, p.call, {GRADING_KEY_SQL}, {EXECUTION_SELECT}, {BLUEPRINT_SELECT} "
        "FROM proposals p JOIN blueprints b ON b.seq = p.blueprint_seq "
        f"JOIN executions e ON e.proposal_seq = p.seq WHERE {where}",
        params,
    ).fetchall()
    n_execution = len(EXECUTION_SELECT.split(","))
    records: list[GradeRecord] = []
    for seq, pid, call_json, key, *rest in rows:
        # Only the grades change: the stored runs (and when they ran) stay as they are.
        run = execution_from_row(rest[:n_execution]).to_run()
        bp_row = rest[n_execution:]
        bp = blueprints[bp_row[0]] if blueprints else blueprint_from_row(bp_row)
        call = None if call_json is None else parse_tool_call(json.loads(call_json))
        records.append((int(seq), str(pid), *score(run, call, bp.expected), str(key)))
    _write_grades(cur, records, utc_now())
    return len(records)


def _forget_verification(cur: duckdb.DuckDBPyConnection, blueprint_id: str) -> None:
    """Drop the runs and grades of the blueprint's proposals, so they are pending again.

    A run depends on the proposal's call and the corpus: a blueprint moved to another corpus needs
    new runs, re-derived by the next verification (until then its items are left out of exports,
    which take only current grades). Decisions are curators' events and stay.
    """
    of_blueprint = "SELECT seq FROM proposals WHERE blueprint_id = ?"
    cur.execute(f"DELETE FROM executions WHERE proposal_seq IN ({of_blueprint})", [blueprint_id])
    cur.execute(f"DELETE FROM grades WHERE proposal_seq IN ({of_blueprint})", [blueprint_id])
    cur.execute(
        "UPDATE proposals SET span_f1 = NULL, reward = NULL "
        "WHERE blueprint_id = ? AND (span_f1 IS NOT NULL OR reward IS NOT NULL)",
        [blueprint_id],
    )


def add_proposals(
    cur: duckdb.DuckDBPyConnection, proposals: Sequence[Proposal], *, source: str
) -> ImportReport:
    if not proposals:
        return ImportReport(source=source, new=0, existing=0)
    blueprint_ids = sorted({p.blueprint_id for p in proposals})
    cur.register("incoming_keys", pd.DataFrame({"id": blueprint_ids}))
    seq_of = dict(
        cur.execute(
            "SELECT b.id, b.seq FROM blueprints b JOIN incoming_keys i ON i.id = b.id"
        ).fetchall()
    )
    cur.unregister("incoming_keys")
    unknown = [b for b in blueprint_ids if b not in seq_of]
    if unknown:
        shown = ", ".join(repr(b) for b in unknown[:5])
        raise StoreError(
            f"proposals name {len(unknown)} unknown blueprint(s): {shown}; store the blueprints first"
        )
    ids = [proposal_id(p) for p in proposals]
    cur.register("incoming_keys", pd.DataFrame({"id": sorted(set(ids))}))
    stored = {
        r[0]
        for r in cur.execute(
            "SELECT p.id FROM proposals p JOIN incoming_keys i ON i.id = p.id"
        ).fetchall()
    }
    cur.unregister("incoming_keys")
    now = utc_now()
    rows = []
    seen = set(stored)
    for p, pid in zip(proposals, ids, strict=True):
        if pid not in seen:
            seen.add(pid)
            row = list(proposal_row(p, pid=pid, blueprint_seq=seq_of[p.blueprint_id], now=now))
            row[PROPOSAL_COLUMNS.index("repairs")] = json.dumps(list(p.repairs))
            rows.append(row)
    if rows:
        cur.register("incoming_proposals", frame(PROPOSAL_COLUMNS, rows))
        columns = ", ".join(PROPOSAL_COLUMNS)
        select = ", ".join(
            "CAST(CAST(repairs AS JSON) AS VARCHAR[])" if c == "repairs" else c
            for c in PROPOSAL_COLUMNS
        )
        cur.execute(f"INSERT INTO proposals ({columns}) SELECT {select} FROM incoming_proposals")
        cur.unregister("incoming_proposals")
    sightings = frame(
        ("proposal_id", "engine", "model"),
        [(pid, p.engine, p.model) for pid, p in zip(ids, proposals, strict=True)],
    )
    cur.register("incoming_sightings", sightings)
    cur.execute(
        "INSERT INTO proposal_sightings SELECT proposal_id, engine, model, ? FROM incoming_sightings",
        [now],
    )
    cur.unregister("incoming_sightings")
    return ImportReport(
        source=source, new=len(rows), existing=len(proposals) - len(rows), ids=tuple(ids)
    )


#: One outcome of verification: (proposal id, run, grade or None when nothing could be graded, reward).
ExecutionRecord = tuple[str, RunResult, Grade | None, Reward]

#: (column, type) of `executions` and `grades`, in table order: the batch is sent as one typed list
#: per column and unnested into rows.
_EXECUTION_COLUMNS: Final = (
    ("proposal_seq", "BIGINT"),
    ("proposal_id", "VARCHAR"),
    ("ok", "BOOLEAN"),
    ("findings", "JSON"),
    ("n_findings", "INTEGER"),
    ("return_code", "INTEGER"),
    ("stderr", "VARCHAR"),
    ("elapsed_s", "DOUBLE"),
    ("truncated", "BOOLEAN"),
    ("error_kind", "VARCHAR"),
    ("error", "VARCHAR"),
    ("executed_at", "TIMESTAMP"),
    ("warnings", "JSON"),
    ("snapshot_id", "VARCHAR"),
    ("tool_versions", "JSON"),
)
_GRADE_COLUMNS: Final = (
    ("proposal_seq", "BIGINT"),
    ("proposal_id", "VARCHAR"),
    ("file_iou", "DOUBLE"),
    ("span_precision", "DOUBLE"),
    ("span_recall", "DOUBLE"),
    ("span_f1", "DOUBLE"),
    ("n_predicted", "INTEGER"),
    ("n_expected", "INTEGER"),
    ("n_matched", "INTEGER"),
    ("reward", "DOUBLE"),
    ("components", "JSON"),
    ("graded_at", "TIMESTAMP"),
    ("graded_against", "VARCHAR"),
)
_GRADE_METRICS: Final = tuple(name for name, _ in _GRADE_COLUMNS[2:9])


def record_executions(
    cur: duckdb.DuckDBPyConnection,
    batch: Sequence[ExecutionRecord],
    graded_against: Mapping[str, str] | None = None,
    snapshots: Mapping[str, str | None] | None = None,
) -> list[str]:
    """Store runs, grades and rewards, replacing earlier ones, and the cached `span_f1`/`reward`.

    Four statements whatever the batch size, each taking its rows as one list per column:
    measured on 50-outcome batches, ~0.4 ms per outcome, against ~0.7 ms from pandas DataFrames,
    ~10 ms with executemany and ~20 ms for one transaction per outcome (a commit costs tens of
    milliseconds whatever it holds). A proposal named twice keeps its last record.

    `graded_against` maps a proposal id to the blueprint key (corpus + expected spans) its outcome
    was computed against; an outcome whose blueprint changed since is not written (its id is
    returned), so a verification that overlapped an edit never stores a stale grade.
    """
    latest = {record[0]: record for record in batch}
    if not latest:
        return []
    found = cur.execute(
        f"SELECT p.id, p.seq, {GRADING_KEY_SQL}, b.corpus FROM proposals p "
        "JOIN blueprints b ON b.seq = p.blueprint_seq "
        "WHERE p.id IN (SELECT unnest(?::VARCHAR[]))",
        [list(latest)],
    ).fetchall()
    seq_of: dict[str, int] = {r[0]: int(r[1]) for r in found}
    key_of: dict[str, str] = {r[0]: str(r[2]) for r in found}
    corpus_of: dict[str, str] = {r[0]: str(r[3]) for r in found}
    unknown = [pid for pid in latest if pid not in seq_of]
    if unknown:
        more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
        raise StoreError(f"no proposal with id {unknown[0]!r} in the store{more}")
    stale = [
        pid
        for pid in latest
        if graded_against is not None
        and pid in graded_against
        and graded_against[pid] != key_of[pid]
    ]
    for pid in stale:
        del latest[pid]
    if not latest:
        return stale
    now = utc_now()
    executions: list[tuple[Any, ...]] = []
    grades: list[GradeRecord] = []
    # What the runs ran on: a finding made on other bytes or by another tool version is stale.
    # Read now (a walk of the corpus) unless the caller read it before running them.
    known = snapshots or {}
    snapshots = {c: known[c] if c in known else corpus_snapshot(c) for c in set(corpus_of.values())}
    versions = tool_versions_json()
    for pid, run, graded, rewarded in latest.values():
        seq = seq_of[pid]
        executions.append(
            (
                seq,
                pid,
                run.ok,
                # The same objects as `Finding.to_dict` through json.dumps, ~10x faster.
                _FINDINGS_JSON.encode(run.findings).decode("utf-8"),
                len(run.findings),
                run.return_code,
                run.stderr,
                run.elapsed_s,
                run.truncated,
                None if run.error_kind is None else run.error_kind.value,
                run.error,
                now,
                json.dumps(list(run.warnings), ensure_ascii=False),
                snapshots[corpus_of[pid]],
                versions,
            )
        )
        grades.append((seq, pid, graded, rewarded, key_of[pid]))
    _insert_or_replace_columns(cur, "executions", _EXECUTION_COLUMNS, executions)
    _write_grades(cur, grades, now)
    return stale


#: (proposal seq, proposal id, grade or None, reward, the blueprint key it was graded against).
GradeRecord = tuple[int, str, Grade | None, Reward, str]


def _write_grades(
    cur: duckdb.DuckDBPyConnection, records: Sequence[GradeRecord], now: datetime
) -> None:
    """Store grades and rewards, replacing earlier ones, and the cached `span_f1`/`reward`."""
    rows = [
        (
            seq,
            pid,
            *(
                (None,) * len(_GRADE_METRICS)
                if graded is None
                else tuple(getattr(graded, name) for name in _GRADE_METRICS)
            ),
            rewarded.total,
            json.dumps(dict(rewarded.components)),
            now,
            key,
        )
        for seq, pid, graded, rewarded, key in records
    ]
    _insert_or_replace_columns(cur, "grades", _GRADE_COLUMNS, rows)
    cur.execute(
        "UPDATE proposals SET span_f1 = g.span_f1, reward = g.reward FROM (SELECT "
        "unnest(?::BIGINT[]) AS seq, unnest(?::DOUBLE[]) AS span_f1, unnest(?::DOUBLE[]) AS reward"
        ") g WHERE proposals.seq = g.seq",
        [[r[0] for r in rows], [r[5] for r in rows], [r[9] for r in rows]],
    )


def _insert_or_replace_columns(
    cur: duckdb.DuckDBPyConnection,
    table: str,
    columns: Sequence[tuple[str, str]],
    rows: Sequence[tuple[Any, ...]],
) -> None:
    """INSERT OR REPLACE `rows` (values in `columns` order) into `table` as one statement."""
    # A JSON list parameter would be parsed as a list of JSON values; send text and cast each.
    select = ", ".join(
        f"CAST(unnest(${i}::VARCHAR[]) AS JSON)" if kind == "JSON" else f"unnest(${i}::{kind}[])"
        for i, (_, kind) in enumerate(columns, start=1)
    )
    values = [[row[i] for row in rows] for i in range(len(columns))]
    cur.execute(f"INSERT OR REPLACE INTO {table} SELECT {select}", values)
