"""Draft blueprints: what `codesearch synthesize` made from a corpus, waiting for a reviewer.

A draft carries everything a blueprint needs (intent, reference call, expected spans) and where it
came from: the mined rule, the engine and model that wrote its intent, the prompt and the sample.
Accepting one writes the blueprint (source `draft:<id>`) and marks the draft in one transaction, so
a blueprint made from a draft always finds its provenance here (`store.drafts.for_blueprint`).

Drafts are a kind of queue item (`store.queue_kinds`): leased, decided, skipped and undone like
proposals; the kind's `settle` writes the blueprint of an accepted draft, and a draft's status is
its item state (`STATUS_SQL`). Every write about a draft bumps its `version`, so two concurrent
decisions on one draft conflict and one retries.
Each function takes a cursor inside the caller's transaction (`Store`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

import duckdb

from codesearch_core.errors import StoreError
from codesearch_core.models import Blueprint, Difficulty, Span, ToolCall, canonical_json, sha256_hex
from codesearch_core.store.rows import bump_version, first_row
from codesearch_core.tools import parse_tool_call

Cursor = duckdb.DuckDBPyConnection

DRAFT_STATUSES: Final = ("pending", "accepted", "rejected")
#: A draft's status is its queue state (`drafts.decision`, kept by the queue), in a draft's words;
#: the `status` column of schema v8 is no longer written.
STATUS_SQL: Final = (
    "CASE decision WHEN 'accept' THEN 'accepted' WHEN 'reject' THEN 'rejected' ELSE 'pending' END"
)
#: The blueprint source of an accepted draft: `draft:<draft id>`.
DRAFT_SOURCE_PREFIX: Final = "draft:"


@dataclass(frozen=True, slots=True)
class Draft:
    """A synthesized blueprint candidate and its provenance. The store fills the review fields."""

    id: str
    corpus: str
    language: str
    intent: str
    reference_call: ToolCall
    expected: tuple[Span, ...]
    rule: str  # the mined rule template, e.g. "js.call"
    engine: str  # templates | vllm | openai
    model: str = ""
    prompt: str = ""
    sample: Mapping[str, Any] = field(default_factory=dict)
    difficulty: Difficulty = Difficulty.MEDIUM
    tags: tuple[str, ...] = ()
    reference_reward: float = 1.0
    baseline_reward: float | None = None
    status: str = "pending"
    blueprint_id: str | None = None
    decided_by: str | None = None
    note: str = ""
    seq: int = 0
    version: int = 0

    @property
    def findings_hash(self) -> str:
        """Same corpus and same expected spans (in any order): the same target."""
        spans = sorted(self.expected)
        return sha256_hex(canonical_json([self.corpus, [s.to_dict() for s in spans]]))

    def to_blueprint(
        self, *, intent: str | None = None, blueprint_id: str | None = None
    ) -> Blueprint:
        return Blueprint(
            id=blueprint_id or self.id,
            intent=intent if intent is not None else self.intent,
            reference_call=self.reference_call,
            corpus=self.corpus,
            expected=self.expected,
            language=self.language,
            tags=tuple(dict.fromkeys(("synthesized", *self.tags))),
            difficulty=self.difficulty,
            notes=f"Synthesized from rule {self.rule} ({self.engine}"
            + (f", {self.model}" if self.model else "")
            + f"); draft {self.id}.",
        )


_SELECT: Final = (
    "id, corpus, language, intent, reference_call, expected, rule, engine, model, prompt, sample, "
    "difficulty, tags, reference_reward, baseline_reward, "
    f"{STATUS_SQL}, blueprint_id, decided_by, note, seq, version"
)


def _from_row(r: Sequence[Any]) -> Draft:
    return Draft(
        id=str(r[0]),
        corpus=str(r[1]),
        language=str(r[2]),
        intent=str(r[3]),
        reference_call=parse_tool_call(json.loads(r[4])),
        expected=tuple(
            Span(str(s["path"]), int(s["start_line"]), int(s["end_line"])) for s in json.loads(r[5])
        ),
        rule=str(r[6]),
        engine=str(r[7]),
        model=str(r[8]),
        prompt=str(r[9]),
        sample=json.loads(r[10]),
        difficulty=Difficulty(str(r[11])),
        tags=tuple(r[12]),
        reference_reward=float(r[13]),
        baseline_reward=None if r[14] is None else float(r[14]),
        status=str(r[15]),
        blueprint_id=None if r[16] is None else str(r[16]),
        decided_by=None if r[17] is None else str(r[17]),
        note=str(r[18]),
        seq=int(r[19]),
        version=int(r[20]),
    )


def insert_draft(cur: Cursor, draft: Draft, *, now: datetime) -> bool:
    """Store one new draft; False (nothing written) when its id or its target (corpus + spans)
    is already stored: running synthesis again adds only what is new."""
    key = draft.findings_hash
    if first_row(
        cur.execute("SELECT 1 FROM drafts WHERE id = ? OR findings_hash = ?", [draft.id, key])
    ):
        return False
    cur.execute(
        "INSERT INTO drafts (id, corpus, language, tool, intent, difficulty, reference_call, "
        "expected, findings_hash, tags, rule, engine, model, prompt, sample, reference_reward, "
        "baseline_reward, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            draft.id, draft.corpus, draft.language, draft.reference_call.name.value, draft.intent,
            draft.difficulty.value, draft.reference_call.to_json(),
            json.dumps([s.to_dict() for s in draft.expected]), key, list(draft.tags), draft.rule,
            draft.engine, draft.model, draft.prompt, json.dumps(dict(draft.sample), default=str),
            draft.reference_reward, draft.baseline_reward, now,
        ],
    )  # fmt: skip
    return True


def get_draft(cur: Cursor, draft_id: str) -> Draft | None:
    row = first_row(cur.execute(f"SELECT {_SELECT} FROM drafts WHERE id = ?", [draft_id]))
    return None if row is None else _from_row(row)


def draft_for_blueprint(cur: Cursor, blueprint_id: str) -> Draft | None:
    """The draft a blueprint was accepted from (its provenance), or None."""
    row = first_row(
        cur.execute(
            f"SELECT {_SELECT} FROM drafts WHERE blueprint_id = ? ORDER BY seq LIMIT 1",
            [blueprint_id],
        )
    )
    return None if row is None else _from_row(row)


def list_drafts(
    cur: Cursor, *, status: str | None, corpus: str | None, offset: int, limit: int
) -> tuple[list[Draft], int]:
    clauses, params = ["true"], []
    for column, value in ((STATUS_SQL, status), ("corpus", corpus)):
        if value:
            clauses.append(f"{column} = ?")
            params.append(value)
    where = " AND ".join(clauses)
    total_row = first_row(cur.execute(f"SELECT count(*) FROM drafts WHERE {where}", params))
    rows = cur.execute(
        f"SELECT {_SELECT} FROM drafts WHERE {where} ORDER BY seq LIMIT ? OFFSET ?",
        [*params, max(limit, 0), max(offset, 0)],
    ).fetchall()
    return [_from_row(r) for r in rows], int(total_row[0]) if total_row else 0


def check_pending(cur: Cursor, draft_id: str, seen_version: int | None) -> Draft:
    """The draft, bumped; StoreError unless it is pending and at the version the card showed."""
    bump_version(cur, "drafts", "id", draft_id, what="draft")
    draft = get_draft(cur, draft_id)
    assert draft is not None
    if draft.status != "pending":
        raise StoreError(f"draft {draft_id!r} was {draft.status} by {draft.decided_by} already")
    # `seen_version` is the version the reviewer's card showed (+1 for this write's bump).
    if seen_version is not None and draft.version != seen_version + 1:
        raise StoreError(f"draft {draft_id!r} changed since it was shown: look at it again")
    return draft


def edit_draft(
    cur: Cursor, draft_id: str, *, intent: str, difficulty: Difficulty, seen_version: int | None
) -> Draft:
    check_pending(cur, draft_id, seen_version)
    if not intent.strip():
        raise StoreError("a draft's intent cannot be empty")
    cur.execute(
        "UPDATE drafts SET intent = ?, difficulty = ? WHERE id = ?",
        [intent.strip(), difficulty.value, draft_id],
    )
    found = get_draft(cur, draft_id)
    assert found is not None
    return found
