"""The query behind every export: curated rows in a deterministic order, streamed in batches.

The export rule: a proposal leaves as a gold/chosen answer only when it is resolved as accepted
(enough agreeing reviews, or a lead's final decision), its call ran without an error, and its grade
is current (computed against the blueprint's present corpus and expected spans). Rejected answers
(preference pairs) are items resolved as rejected, items whose run failed, marked so, and the
blueprint's counter-calls (its author's strongest wrong calls: the hardest negatives there are).
`exclusions` counts what the rule leaves out, for the manifest.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any, Final

import duckdb

from codesearch_core.store.filters import QueueFilters
from codesearch_core.store.pinning import NOT_IN_DRIFT_SQL
from codesearch_core.store.queries import blueprint_clauses, proposal_clauses
from codesearch_core.store.rows import first_row
from codesearch_core.store.schema import GRADING_KEY_SQL
from codesearch_core.store.types import ExportRow

#: `tool` is the answer's tool (the proposal's; the reference call's for gold rows).
_EXPORT_KEYS: Final = (
    "b.id, b.intent, b.intent_hash, b.content_hash, b.corpus, b.language, coalesce(p.tool, b.tool), "
    "p.call, p.call_hash, p.raw_text, p.id"
)
_GRADE_CURRENT: Final = f"g.graded_against = {GRADING_KEY_SQL}"
#: The export rule, over proposals `p` joined to their blueprint `b`, run `e` and grade `g`.
#: An accepted item in open drift (its findings changed on a new snapshot) waits for a re-decision.
_ACCEPTED: Final = (
    f"p.decision = 'accept' AND p.call IS NOT NULL AND e.ok AND {_GRADE_CURRENT} "
    f"AND {NOT_IN_DRIFT_SQL}"
)
_REJECTED: Final = "(p.decision = 'reject' OR (NOT e.ok AND p.decision IS DISTINCT FROM 'accept'))"
_ACCEPT_OR_REJECT: Final = f"CASE WHEN {_ACCEPTED} THEN 'accept' ELSE 'reject' END"
#: The "ranked" rows' action: an undecided proposal has none (NULL).
_RANKED_ACTION: Final = f"CASE WHEN {_ACCEPTED} THEN 'accept' WHEN {_REJECTED} THEN 'reject' END"
#: Provenance columns, read only for exports with meta: turning 100,000 timestamps and grades into
#: Python objects costs more than the query.
_EXPORT_META: Final = (
    "p.engine, p.model, g.file_iou, g.span_precision, g.span_recall, g.span_f1, g.n_predicted, "
    "g.n_expected, g.n_matched, g.reward, d.event_id, d.reviewer, "
    "strftime(d.ts, '%Y-%m-%dT%H:%M:%S.%f'), d.note, d.reason"
)
_NO_META: Final = ", ".join(["NULL"] * 15)
#: The reference row carries the blueprint's counter-calls (the pairs export rejects them).
_EXPORT_REFERENCE_SELECT: Final = (
    "b.id, b.intent, b.intent_hash, b.content_hash, b.corpus, b.language, b.tool, "
    "CAST(b.reference_call AS VARCHAR), b.call_hash, CAST(b.reference_call AS VARCHAR), NULL, "
    "NULL, " + _NO_META + ", NULL, CAST(b.counter_calls AS VARCHAR)"
)
_HAS_COUNTER_CALLS: Final = "json_array_length(b.counter_calls) > 0"
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
        run_ok=None if r[27] is None else bool(r[27]),
        counter_calls_json=r[28] if len(r) > 28 and r[28] not in (None, "[]") else None,
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

    "accepted": proposals the export rule takes as answers, matching `f` (its decision field is
    ignored). "pairs": per blueprint with a rejected answer, the reference call, the accepted
    answers and the rejected ones (resolved as rejected, or whose run failed) matching the proposal
    filters; blueprint filters apply to all. `f.tool` is the answer's tool. Without `with_meta` the
    provenance fields (engine, grade, decision) are left empty.
    """
    (proposal_where, proposal_p), (bp_where, bp_p) = _answer_filters(f)
    # A plan seed's reference is several calls: the single-call layouts take no gold from it.
    reference_where, reference_p = _reference_filter(f)
    reference_where += " AND b.plan IS NULL"
    base = (
        f"SELECT {_EXPORT_KEYS}, {_ACCEPT_OR_REJECT}, "
        f"{_EXPORT_META if with_meta else _NO_META}, e.ok, NULL "
        "FROM proposals p JOIN blueprints b ON b.seq = p.blueprint_seq "
        "LEFT JOIN executions e ON e.proposal_seq = p.seq "
        "LEFT JOIN grades g ON g.proposal_seq = p.seq "
    )
    if with_meta:
        base += "LEFT JOIN decisions d ON d.event_id = p.decision_event_id "
    reference = f"SELECT {_EXPORT_REFERENCE_SELECT} FROM blueprints b WHERE {reference_where}"
    if kind == "accepted":
        sql = f"{base} WHERE {_ACCEPTED} AND {bp_where} AND {proposal_where}"
        params: list[Any] = [*bp_p, *proposal_p]
        if include_reference:
            sql += f" UNION ALL {reference}"
            params += reference_p
    elif kind == "pairs":
        rejected = f"{_REJECTED} AND {proposal_where}"
        has_rejected = (
            "(SELECT p.blueprint_seq FROM proposals p "
            f"LEFT JOIN executions e ON e.proposal_seq = p.seq WHERE {rejected})"
        )
        # A blueprint with counter-calls has rejected answers even before anyone reviewed.
        with_counter = f"(SELECT b.seq FROM blueprints b WHERE {_HAS_COUNTER_CALLS})"
        sql = (
            f"{base} WHERE {bp_where} AND (({_ACCEPTED}) OR ({rejected})) "
            f"AND (p.blueprint_seq IN {has_rejected} OR p.blueprint_seq IN {with_counter}) "
            f"UNION ALL SELECT {_EXPORT_REFERENCE_SELECT} FROM blueprints b WHERE {bp_where} "
            f"AND b.plan IS NULL AND (b.seq IN {has_rejected} OR {_HAS_COUNTER_CALLS})"
        )
        params = [*bp_p, *proposal_p, *proposal_p, *bp_p, *proposal_p]
    elif kind == "ranked":
        undecided = f"p.decision IS NULL AND p.call IS NOT NULL AND e.ok AND {_GRADE_CURRENT}"
        sql = (
            f"{base.replace(_ACCEPT_OR_REJECT, _RANKED_ACTION)} WHERE {bp_where} "
            f"AND (({_ACCEPTED}) OR ({_REJECTED}) OR ({undecided})) AND {proposal_where} "
            f"UNION ALL {reference}"
        )
        params = [*bp_p, *proposal_p, *reference_p]
    else:
        raise ValueError(f"unknown export row kind {kind!r}")
    result = cur.execute(f"{sql} ORDER BY 1, 11 NULLS FIRST", params)
    while True:
        batch = result.fetchmany(50_000)
        if not batch:
            return
        for r in batch:
            yield _export_row(r)


def _answer_filters(f: QueueFilters) -> tuple[tuple[str, list[Any]], tuple[str, list[Any]]]:
    """(proposal condition, params), (blueprint condition, params) of an export's filters: `f.tool`
    is the answer's tool, so it goes with the proposal's, not the blueprint's."""
    proposal_f, proposal_p = proposal_clauses(replace(f, tool=None), decision=False)
    if f.tool:
        proposal_f.append("p.tool = ?")
        proposal_p.append(f.tool)
    bp_f, bp_p = blueprint_clauses(replace(f, tool=None))
    return (" AND ".join(proposal_f) or "TRUE", proposal_p), (" AND ".join(bp_f) or "TRUE", bp_p)


def _reference_filter(f: QueueFilters) -> tuple[str, list[Any]]:
    """The condition over `blueprints b` whose reference calls an export reads (plans included:
    callers leave them out or count them): the blueprint filters, `f.tool` as the reference's tool
    and `f.blueprint_id`. Proposal filters (engine, model, ...) do not apply to a reference."""
    _, (where, params) = _answer_filters(f)
    for clause, value in (("b.tool = ?", f.tool), ("b.id = ?", f.blueprint_id)):
        if value:
            where += f" AND {clause}"
            params.append(value)
    return where, params


#: What `answer_counts` counts: the answers the rule takes, then what it leaves out, by reason.
ANSWER_COUNTS: Final = (
    ("answers", _ACCEPTED),
    ("open", "p.decision IS NULL"),
    ("conflict", "p.decision = 'conflict'"),
    ("accepted_not_executed", "p.decision = 'accept' AND e.ok IS NULL"),
    ("accepted_run_failed", "p.decision = 'accept' AND NOT e.ok"),
    ("accepted_stale", f"p.decision = 'accept' AND e.ok AND NOT coalesce({_GRADE_CURRENT}, false)"),
    ("accepted_in_drift", f"p.decision = 'accept' AND e.ok AND NOT {NOT_IN_DRIFT_SQL}"),
)


def answer_counts(cur: duckdb.DuckDBPyConnection, f: QueueFilters) -> dict[str, int]:
    """Proposals matching `f` that the export rule takes ("answers"), and those it leaves out, by
    reason (the other keys)."""
    (proposal_where, proposal_p), (bp_where, bp_p) = _answer_filters(f)
    counts = ", ".join(f"count(*) FILTER (WHERE {rule})" for _, rule in ANSWER_COUNTS)
    row = first_row(
        cur.execute(
            f"SELECT {counts} FROM proposals p JOIN blueprints b ON b.seq = p.blueprint_seq "
            "LEFT JOIN executions e ON e.proposal_seq = p.seq "
            f"LEFT JOIN grades g ON g.proposal_seq = p.seq WHERE {proposal_where} AND {bp_where}",
            [*proposal_p, *bp_p],
        )
    )
    assert row is not None
    return {name: int(n) for (name, _), n in zip(ANSWER_COUNTS, row, strict=True)}


def blueprint_counts(
    cur: duckdb.DuckDBPyConnection, f: QueueFilters, *, with_reference: bool = True
) -> dict[str, int]:
    """Blueprints an export with filters `f` would read rows of but cannot take whole, for its
    manifest: "plan" (a plan's reference is several calls, which no single-call layout holds) and
    "eval" (held out: `split = 'eval'`, counted whatever `f.split` says).

    An export reads a blueprint's reference call (`with_reference`: matching `_reference_filter`)
    and its proposals that match the proposal filters; a blueprint it would read nothing of is
    not skipped, so the counts narrow with every filter the rows do (a blueprint id, an engine).
    "plan" counts by the reference filter alone: it is the plan's reference that no layout holds.
    """
    (proposal_where, proposal_p), _ = _answer_filters(f)
    reference_where, reference_p = _reference_filter(f)
    held_where, held_p = _reference_filter(replace(f, split=None))
    # The blueprint filters less the reference's tool (the proposals' tool is in proposal_where).
    _, (held_bp_where, held_bp_p) = _answer_filters(replace(f, split=None))
    read = (
        f"({held_bp_where} AND EXISTS (SELECT 1 FROM proposals p "
        f"WHERE p.blueprint_seq = b.seq AND {proposal_where}))"
    )
    read_p = [*held_bp_p, *proposal_p]
    if with_reference:
        read = f"({read} OR ({held_where}))"
        read_p += held_p
    row = first_row(
        cur.execute(
            "SELECT (SELECT count(*) FROM blueprints b WHERE b.plan IS NOT NULL AND "
            f"{reference_where}), "
            f"(SELECT count(*) FROM blueprints b WHERE b.split = 'eval' AND {read})",
            [*reference_p, *read_p],
        )
    )
    assert row is not None
    return {"plan": int(row[0]), "eval": int(row[1])}
