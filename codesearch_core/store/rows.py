"""Domain records to table rows and back. Rows were validated on the way in, so reading trusts them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Final

import duckdb

from codesearch_core.errors import StoreError
from codesearch_core.models import (
    Blueprint,
    CounterCall,
    DecisionAction,
    Difficulty,
    Finding,
    Plan,
    PlanStep,
    Proposal,
    Span,
    Split,
    ToolCall,
    ToolName,
    canonical_json,
    sha256_hex,
)
from codesearch_core.store.types import DecisionEvent, Execution, StoredProposal
from codesearch_core.tools import tool_versions_json

BLUEPRINT_COLUMNS: Final = (
    "id",
    "content_hash",
    "intent",
    "intent_hash",
    "corpus",
    "language",
    "tool",
    "reference_call",
    "call_hash",
    "expected",
    "tags",
    "difficulty",
    "notes",
    "counter_calls",
    "plan",
    "snapshot_id",
    "tool_versions",
    "split",
    "source",
    "created_at",
    "updated_at",
)

PROPOSAL_COLUMNS: Final = (
    "id",
    "blueprint_id",
    "blueprint_seq",
    "engine",
    "model",
    "sampling",
    "prompt",
    "raw_text",
    "call",
    "call_hash",
    "tool",
    "valid",
    "error",
    "repairs",
    "latency_s",
    "prompt_tokens",
    "completion_tokens",
    "finish_reason",
    "mutation_kind",
    "parent_id",
    "created_at",
)

#: What `blueprint_from_row` reads, in order.
BLUEPRINT_SELECT: Final = (
    "b.id, b.intent, b.reference_call, b.corpus, b.expected, b.language, b.tags, b.difficulty, "
    "b.notes, b.counter_calls, b.plan, b.snapshot_id, b.split"
)

#: What `stored_proposal_from_row` reads, in order.
PROPOSAL_SELECT: Final = (
    "p.id, p.seq, p.blueprint_id, p.engine, p.model, p.raw_text, p.call, p.valid, p.error, "
    "p.repairs, p.sampling, p.prompt, p.latency_s, p.prompt_tokens, p.completion_tokens, "
    "p.finish_reason, p.mutation_kind, p.parent_id, p.call_hash, p.created_at"
)

EXECUTION_SELECT: Final = (
    "e.ok, e.findings, e.return_code, e.stderr, e.elapsed_s, e.truncated, e.error_kind, e.error, "
    "e.executed_at, e.warnings"
)

DECISION_SELECT: Final = (
    "d.event_id, d.item_id, d.action, d.reviewer, d.note, d.reason, d.ts, d.undoes, d.final, "
    "d.guideline_version, d.batch_id"
)


def utc_now() -> datetime:
    """Naive UTC, the store's timestamp convention (see store_schema)."""
    return datetime.now(UTC).replace(tzinfo=None)


def blueprint_row(bp: Blueprint, *, source: str, now: datetime) -> tuple[Any, ...]:
    """Values for BLUEPRINT_COLUMNS."""
    return (
        bp.id,
        bp.content_hash,
        bp.intent,
        bp.intent_hash,
        bp.corpus,
        bp.language,
        bp.tool.value,
        bp.reference_call.to_json(),
        bp.reference_call.call_hash,
        canonical_json([s.to_dict() for s in bp.expected]),
        list(bp.tags),
        bp.difficulty.value,
        bp.notes,
        canonical_json([{"call": c.call.to_dict(), "why": c.why} for c in bp.counter_calls]),
        None if bp.plan is None else canonical_json(bp.reference_dict()),
        bp.snapshot,
        # The tools that checked the spans: the ones installed now (a blueprint is stored right
        # after its reference ran, or its seed file was verified).
        tool_versions_json(),
        bp.split.value,
        source,
        now,
        now,
    )


def spans_from_json(text: str) -> tuple[Span, ...]:
    """A blueprint's `expected` column as Spans (with their supporting marks)."""
    return tuple(
        Span(s["path"], int(s["start_line"]), int(s["end_line"]), bool(s.get("supporting")))
        for s in json.loads(text)
    )


def blueprint_from_row(row: Sequence[Any]) -> Blueprint:
    call = json.loads(row[2])
    return Blueprint(
        id=row[0],
        intent=row[1],
        reference_call=ToolCall(ToolName(call["name"]), call["arguments"]),
        corpus=row[3],
        expected=spans_from_json(row[4]),
        language=row[5],
        tags=tuple(row[6]),
        difficulty=Difficulty(row[7]),
        notes=row[8],
        counter_calls=tuple(
            CounterCall(ToolCall(ToolName(c["call"]["name"]), c["call"]["arguments"]), c["why"])
            for c in (json.loads(row[9]) if len(row) > 9 and row[9] else [])
        ),
        plan=_plan(row[10]) if len(row) > 10 and row[10] else None,
        snapshot=row[11] if len(row) > 11 else None,
        split=Split(row[12]) if len(row) > 12 and row[12] else Split.TRAIN,
    )


def _plan(text: str) -> Plan:
    steps = json.loads(text)["steps"]
    return Plan(
        tuple(
            PlanStep(
                ToolCall(ToolName(s["call"]["name"]), s["call"]["arguments"]),
                bool(s["restrict_to_previous"]),
            )
            for s in steps
        )
    )


def proposal_id(p: Proposal) -> str:
    """The same call for the same blueprint is one proposal, whoever proposed it; an invalid
    proposal is identified by its raw text instead."""
    if p.valid and p.call is not None:
        key = f"call\n{p.blueprint_id}\n{p.call.call_hash}"
    else:
        key = f"raw\n{p.blueprint_id}\n{p.raw_text}"
    return sha256_hex(key)[:24]


def proposal_row(p: Proposal, *, pid: str, blueprint_seq: int, now: datetime) -> tuple[Any, ...]:
    """Values for PROPOSAL_COLUMNS."""
    call = p.call if p.valid else None
    return (
        pid,
        p.blueprint_id,
        blueprint_seq,
        p.engine,
        p.model,
        canonical_json(dict(p.sampling)),
        p.prompt,
        p.raw_text,
        None if call is None else call.to_json(),
        None if call is None else call.call_hash,
        None if call is None else call.name.value,
        call is not None,
        p.error,
        list(p.repairs),
        float(p.latency_s),
        p.prompt_tokens,
        p.completion_tokens,
        p.finish_reason,
        p.mutation_kind,
        p.parent_id,
        now,
    )


def stored_proposal_from_row(row: Sequence[Any], sightings: int = 1) -> StoredProposal:
    call_obj = None if row[6] is None else json.loads(row[6])
    call = None if call_obj is None else ToolCall(ToolName(call_obj["name"]), call_obj["arguments"])
    proposal = Proposal(
        blueprint_id=row[2],
        engine=row[3],
        model=row[4],
        raw_text=row[5],
        call=call,
        valid=bool(row[7]),
        error=row[8],
        repairs=tuple(row[9]),
        sampling=json.loads(row[10]),
        prompt=row[11],
        latency_s=float(row[12]),
        prompt_tokens=row[13],
        completion_tokens=row[14],
        finish_reason=row[15],
        mutation_kind=row[16],
        parent_id=row[17],
    )
    return StoredProposal(
        id=row[0],
        seq=int(row[1]),
        proposal=proposal,
        call_hash=row[18],
        created_at=row[19],
        sightings=sightings,
    )


def execution_from_row(row: Sequence[Any]) -> Execution:
    return Execution(
        ok=bool(row[0]),
        findings=tuple(Finding.from_dict(f) for f in json.loads(row[1])),
        return_code=row[2],
        stderr=row[3],
        elapsed_s=float(row[4]),
        truncated=bool(row[5]),
        error_kind=row[6],
        error=row[7],
        executed_at=row[8],
        warnings=tuple(json.loads(row[9] or "[]")),
    )


def decision_from_row(row: Sequence[Any], *, undone: bool = False) -> DecisionEvent:
    return DecisionEvent(
        event_id=int(row[0]),
        item_id=row[1],
        action=DecisionAction(row[2]),
        reviewer=row[3],
        note=row[4],
        reason=row[5],
        ts=row[6],
        undoes=None if row[7] is None else int(row[7]),
        undone=undone,
        final=bool(row[8]),
        guideline_version=None if row[9] is None else int(row[9]),
        batch_id=row[10],
    )


def first_row(result: duckdb.DuckDBPyConnection) -> tuple[Any, ...] | None:
    """The first row, reading the result to its end: DuckDB refuses new work on a cursor whose last
    result is unfinished, and `fetchone` leaves it so."""
    rows = result.fetchall()
    return rows[0] if rows else None


def bump_version(
    cur: duckdb.DuckDBPyConnection, table: str, id_column: str, item_id: str, *, what: str
) -> int:
    """Add one to the row's `version` and return it; StoreError when there is no such row.

    Every write about a queue item or a draft bumps it first, so two concurrent writes about one
    row conflict and one is retried on the new state; a card's version says whether the row
    changed since it was shown."""
    row = first_row(
        cur.execute(
            f"UPDATE {table} SET version = version + 1 WHERE {id_column} = ? RETURNING version",
            [item_id],
        )
    )
    if row is None:
        raise StoreError(f"no {what} with id {item_id!r} in the store")
    return int(row[0])
