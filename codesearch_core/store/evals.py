"""Eval runs in the store (tables `eval_runs` and `eval_items`, schema v10): the records and their
reads and writes. Making a run (asking an engine, running and grading its answers) is a layer
above (`export.evaluation`); the store only keeps what was found, so a run can be listed, compared
and each answer opened in the diff view without running anything again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import duckdb

from codesearch_core.corpora import blueprint_from_dict, blueprint_to_dict
from codesearch_core.errors import CodesearchError
from codesearch_core.models import Blueprint, Finding, canonical_json

#: An answer this good counts as solving its blueprint (for pass@k).
PASS_REWARD: Final = 0.9
#: The summary key of a run stored while it is being made (`{"episodes": done, "of": planned}`):
#: `checkpoint_run` may replace it, and `eval --agent --resume` continue it.
UNFINISHED: Final = "unfinished"


@dataclass(frozen=True, slots=True)
class EvalAnswer:
    """One answer of an engine to a blueprint, run and graded. `findings` are what its call found
    (empty when it held no call or its run failed), kept for the diff view."""

    raw_text: str
    call: Mapping[str, Any] | None
    repaired: bool
    reward: float
    span_f1: float
    tool_ok: bool
    pcre2_violation: bool
    error: str = ""
    findings: tuple[Finding, ...] = ()
    truncated: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "raw_text": self.raw_text,
            "call": None if self.call is None else dict(self.call),
            "repaired": self.repaired,
            "reward": self.reward,
            "span_f1": self.span_f1,
            "tool_ok": self.tool_ok,
            "pcre2_violation": self.pcre2_violation,
            "error": self.error,
            "findings": [f.to_dict() for f in self.findings],
            "truncated": self.truncated,
        }

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> EvalAnswer:
        return EvalAnswer(
            raw_text=str(d["raw_text"]),
            call=d["call"],
            repaired=bool(d["repaired"]),
            reward=float(d["reward"]),
            span_f1=float(d["span_f1"]),
            tool_ok=bool(d["tool_ok"]),
            pcre2_violation=bool(d["pcre2_violation"]),
            error=str(d.get("error", "")),
            findings=tuple(Finding.from_dict(f) for f in d.get("findings", ())),
            truncated=bool(d.get("truncated", False)),
        )


@dataclass(frozen=True, slots=True)
class EvalItem:
    """A blueprint of the set and the engine's answers to it. `blueprint` is the blueprint as the
    answers were graded against it (None for runs stored before schema v11)."""

    blueprint_id: str
    tags: tuple[str, ...]
    language: str
    reference_tool: str
    answers: tuple[EvalAnswer, ...]
    corpus: str = ""
    blueprint: Blueprint | None = None

    @property
    def best_reward(self) -> float:
        return max((a.reward for a in self.answers), default=0.0)


@dataclass(frozen=True, slots=True)
class EvalRun:
    """One `codesearch eval`: the engine, the set, and per blueprint its answers; `summary` holds
    the metrics overall, per tag and per language. A run listed without its items has `items=()`
    and `n_items` set."""

    run_id: str
    engine: str
    model: str
    n: int
    blueprints: str
    created_at: str
    items: tuple[EvalItem, ...]
    summary: Mapping[str, Any] = field(default_factory=dict)
    created_by: str = ""

    @property
    def label(self) -> str:
        """How the run is named in lists and charts: model, engine, answers per blueprint, the
        set and when (to the second; two runs of one second differ by `run_id`); a run still
        being made (or interrupted) says how many of its episodes it has."""
        when = self.created_at[:19].replace("T", " ")
        label = f"{self.model} ({self.engine}) n={self.n} · {self.blueprints} · {when}"
        unfinished = self.summary.get(UNFINISHED)
        if isinstance(unfinished, Mapping):  # stored as it goes, not done (yet)
            label += f" · unfinished: {unfinished.get('episodes')} of {unfinished.get('of')}"
        return label


_RUN_COLUMNS: Final = "run_id, engine, model, n, blueprints, created_at, created_by, summary"


def insert_run(cur: duckdb.DuckDBPyConnection, run: EvalRun, *, created_by: str) -> bool:
    """Store the run and its items; False (nothing written) when its id is stored already."""
    found = cur.execute("SELECT 1 FROM eval_runs WHERE run_id = ?", [run.run_id]).fetchone()
    if found is not None:
        return False
    created = datetime.fromisoformat(run.created_at)
    if created.tzinfo is not None:  # the store's timestamps are naive UTC
        created = created.astimezone(UTC).replace(tzinfo=None)
    cur.execute(
        f"INSERT INTO eval_runs ({_RUN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            run.run_id,
            run.engine,
            run.model,
            run.n,
            run.blueprints,
            created,
            run.created_by or created_by,
            canonical_json(run.summary),
        ],
    )
    rows = [
        (
            run.run_id,
            item.blueprint_id,
            position,
            item.corpus,
            item.language,
            list(item.tags),
            item.reference_tool,
            item.best_reward,
            json.dumps([a.to_dict() for a in item.answers], ensure_ascii=False),
            None if item.blueprint is None else canonical_json(blueprint_to_dict(item.blueprint)),
        )
        for position, item in enumerate(run.items)
    ]
    if rows:
        cur.executemany(
            "INSERT INTO eval_items (run_id, blueprint_id, position, corpus, language, tags, "
            "reference_tool, best_reward, answers, blueprint) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    return True


def checkpoint_run(cur: duckdb.DuckDBPyConnection, run: EvalRun, *, created_by: str) -> None:
    """Store a run that is still being made (its summary has `UNFINISHED`), or the end of one:
    the stored run of its id, if any, is replaced, but only while that one is unfinished (a
    finished run is evidence, replaced by nobody). Its author stays the one who began it."""
    row = cur.execute(
        "SELECT CAST(summary AS VARCHAR), created_by FROM eval_runs WHERE run_id = ?",
        [run.run_id],
    ).fetchone()
    if row is not None:
        if UNFINISHED not in json.loads(row[0]):
            raise CodesearchError(f"eval run {run.run_id} is finished: it cannot be continued")
        delete_run(cur, run.run_id)
        created_by = row[1]
    insert_run(cur, run, created_by=created_by)


def _run(row: Sequence[Any], items: tuple[EvalItem, ...] = ()) -> EvalRun:
    created: datetime = row[5]
    return EvalRun(
        run_id=row[0],
        engine=row[1],
        model=row[2],
        n=int(row[3]),
        blueprints=row[4],
        created_at=created.isoformat(),
        items=items,
        summary=json.loads(row[7]),
        created_by=row[6],
    )


def list_runs(cur: duckdb.DuckDBPyConnection) -> list[EvalRun]:
    """Every run, newest first, without its items (the summaries are enough to list them)."""
    rows = cur.execute(
        f"SELECT {_RUN_COLUMNS} FROM eval_runs ORDER BY created_at DESC, run_id DESC"
    ).fetchall()
    return [_run(r) for r in rows]


def get_run(cur: duckdb.DuckDBPyConnection, run_id: str) -> EvalRun | None:
    """One run with its items, in the order they were evaluated."""
    row = cur.execute(f"SELECT {_RUN_COLUMNS} FROM eval_runs WHERE run_id = ?", [run_id]).fetchone()
    if row is None:
        return None
    rows = cur.execute(
        "SELECT blueprint_id, tags, language, reference_tool, CAST(answers AS VARCHAR), corpus, "
        "CAST(blueprint AS VARCHAR) FROM eval_items WHERE run_id = ? ORDER BY position",
        [run_id],
    ).fetchall()
    items = tuple(
        EvalItem(
            blueprint_id=r[0],
            tags=tuple(r[1]),
            language=r[2],
            reference_tool=r[3],
            answers=tuple(EvalAnswer.from_dict(a) for a in json.loads(r[4])),
            corpus=r[5],
            blueprint=_blueprint(r[6]),
        )
        for r in rows
    )
    return _run(row, items)


def _blueprint(text: str | None) -> Blueprint | None:
    """The stored blueprint; None when there is none, or it no longer validates (a later rule):
    the diff view then uses the store's."""
    if text is None:
        return None
    try:
        return blueprint_from_dict(json.loads(text))
    except (CodesearchError, ValueError):
        return None


def delete_run(cur: duckdb.DuckDBPyConnection, run_id: str) -> bool:
    cur.execute("DELETE FROM eval_items WHERE run_id = ?", [run_id])
    gone = cur.execute("DELETE FROM eval_runs WHERE run_id = ? RETURNING run_id", [run_id])
    return gone.fetchone() is not None
