"""The query behind every export: curated rows in a deterministic order, streamed in batches."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Final

import duckdb

from codesearch_core.store.queries import blueprint_clauses, proposal_clauses
from codesearch_core.store.types import ExportRow, QueueFilters

_EXPORT_KEYS: Final = (
    "b.id, b.intent, b.intent_hash, b.content_hash, b.corpus, b.language, b.tool, "
    "p.call, p.call_hash, p.raw_text, p.id"
)
#: Provenance columns, read only for exports with meta: turning 100,000 timestamps and grades into
#: Python objects costs more than the query.
_EXPORT_META: Final = (
    "p.engine, p.model, g.file_iou, g.span_precision, g.span_recall, g.span_f1, g.n_predicted, "
    "g.n_expected, g.n_matched, g.reward, d.event_id, d.reviewer, "
    "strftime(d.ts, '%Y-%m-%dT%H:%M:%S.%f'), d.note, d.reason"
)
_NO_META: Final = ", ".join(["NULL"] * 15)
_EXPORT_REFERENCE_SELECT: Final = (
    "b.id, b.intent, b.intent_hash, b.content_hash, b.corpus, b.language, b.tool, "
    "CAST(b.reference_call AS VARCHAR), b.call_hash, CAST(b.reference_call AS VARCHAR), NULL, "
    "NULL, " + _NO_META
)
_GRADE_FIELDS: Final = (
    "file_iou",
    "span_precision",
    "span_recall",
    "span_f1",
    "n_predicted",
    "n_expected",
    "n_matched",
)


def _export_row(r: Sequence[Any]) -> ExportRow:
    graded = r[18] is not None
    return ExportRow(
        blueprint_id=r[0],
        intent=r[1],
        intent_hash=r[2],
        content_hash=r[3],
        corpus=r[4],
        language=r[5],
        tool=r[6],
        call_json=r[7],
        call_hash=r[8],
        raw_text=r[9],
        proposal_id=r[10],
        action=r[11],
        engine=r[12],
        model=r[13],
        grade=dict(zip(_GRADE_FIELDS, r[14:21], strict=True)) if graded else None,
        reward=r[21],
        decision=None
        if r[22] is None
        else {
            "event_id": int(r[22]),
            "action": r[11],
            "reviewer": r[23],
            "ts": r[24],
            "note": r[25],
            "reason": r[26],
        },
    )


def export_rows(
    cur: duckdb.DuckDBPyConnection,
    f: QueueFilters,
    *,
    kind: str,
    include_reference: bool,
    with_meta: bool = True,
) -> Iterator[ExportRow]:
    """Rows ordered by blueprint id, the reference call (if asked) first, then by proposal id.

    "accepted": accepted proposals matching `f` (its decision field is ignored). "pairs": per
    blueprint, the reference call, every accepted proposal, and the rejected proposals matching
    the proposal filters; blueprint filters apply to all. Without `with_meta` the provenance
    fields (engine, grade, decision) are left empty.
    """
    proposal_f, proposal_p = proposal_clauses(f, decision=False)
    bp_f, bp_p = blueprint_clauses(f)
    bp_where = " AND ".join(bp_f) or "TRUE"
    proposal_where = " AND ".join(proposal_f) or "TRUE"
    base = (
        f"SELECT {_EXPORT_KEYS}, p.decision, {_EXPORT_META if with_meta else _NO_META} "
        "FROM proposals p JOIN blueprints b ON b.seq = p.blueprint_seq "
    )
    if with_meta:
        base += (
            "LEFT JOIN grades g ON g.proposal_seq = p.seq "
            "LEFT JOIN decisions d ON d.event_id = p.decision_event_id "
        )
    reference = f"SELECT {_EXPORT_REFERENCE_SELECT} FROM blueprints b WHERE {bp_where}"
    if kind == "accepted":
        # An accepted item without a valid call cannot be written as a call; accepting one is refused.
        sql = (
            f"{base} WHERE p.decision = 'accept' AND p.call IS NOT NULL "
            f"AND {bp_where} AND {proposal_where}"
        )
        params: list[Any] = [*bp_p, *proposal_p]
        if include_reference:
            sql += f" UNION ALL {reference}"
            params += bp_p
            if f.blueprint_id:
                sql += " AND b.id = ?"
                params.append(f.blueprint_id)
    elif kind == "pairs":
        rejected = f"p.decision = 'reject' AND {proposal_where}"
        has_rejected = f"(SELECT p.blueprint_seq FROM proposals p WHERE {rejected})"
        sql = (
            f"{base} WHERE {bp_where} "
            f"AND ((p.decision = 'accept' AND p.call IS NOT NULL) OR ({rejected})) "
            f"AND p.blueprint_seq IN {has_rejected} "
            f"UNION ALL {reference} AND b.seq IN {has_rejected}"
        )
        params = [*bp_p, *proposal_p, *proposal_p, *bp_p, *proposal_p]
    else:
        raise ValueError(f"unknown export row kind {kind!r}")
    result = cur.execute(f"{sql} ORDER BY 1, 11 NULLS FIRST", params)
    while True:
        batch = result.fetchmany(50_000)
        if not batch:
            return
        for r in batch:
            yield _export_row(r)
