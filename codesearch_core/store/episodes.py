"""The gym's episodes in the store (table `episodes`, schema v12): the record and its reads and
writes. Playing episodes is a layer above (`gym`); the store keeps what was played, with where
it came from, so it can be reviewed, exported and replayed without playing it again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

import duckdb

from codesearch_core.corpora import list_corpora
from codesearch_core.models import canonical_json, sha256_hex
from codesearch_core.store.pinning import OPEN_DRIFT_SQL


@dataclass(frozen=True, slots=True)
class StoredEpisode:
    """One kept episode. `trajectory` is the gym's (`EpisodeResult.to_dict()`: every call with
    its observation, the submit, the info); the rest is provenance and the figures a queue sorts
    and filters by."""

    blueprint_id: str
    corpus: str
    engine: str
    model: str
    reward: float
    components: Mapping[str, float]
    span_f1: float
    turns: int
    calls: int
    invalid_calls: int
    end_reason: str
    trajectory: Mapping[str, Any]
    sampling: Mapping[str, Any] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    snapshot: str | None = None
    tool_versions: Mapping[str, str] = field(default_factory=dict)
    created_at: datetime | None = None
    decision: str | None = None
    #: A corrected episode (`gym.correct`): the episode it corrects and the turn edited (1-based).
    corrected_from: str | None = None
    corrected_turn: int | None = None

    @property
    def episode_id(self) -> str:
        return episode_id_of(self.blueprint_id, self.trajectory)


def episode_id_of(blueprint_id: str, trajectory: Mapping[str, Any]) -> str:
    """The blueprint and the calls in order: the same episode sampled twice is one."""
    calls = [
        [(c.get("name"), c.get("arguments")) for c in turn] for turn in trajectory.get("turns", [])
    ]
    return sha256_hex(canonical_json({"blueprint_id": blueprint_id, "calls": calls}))


_COLUMNS: Final = (
    "episode_id, blueprint_id, corpus, engine, model, sampling, settings, snapshot, tool_versions, "
    "reward, components, span_f1, turns, calls, invalid_calls, end_reason, trajectory, created_at, "
    "decision, corrected_from, corrected_turn"
)


def insert_episodes(
    cur: duckdb.DuckDBPyConnection, episodes: Sequence[StoredEpisode], at: datetime
) -> int:
    """Store the episodes not stored yet (by `episode_id`); how many were new."""
    ids = [e.episode_id for e in episodes]
    if not ids:
        return 0
    known = {
        r[0]
        for r in cur.execute(
            "SELECT episode_id FROM episodes WHERE episode_id IN (SELECT unnest(?))", [ids]
        ).fetchall()
    }
    rows = []
    for e, episode_id in zip(episodes, ids, strict=True):
        if episode_id in known:
            continue
        known.add(episode_id)
        rows.append(
            (
                episode_id, e.blueprint_id, e.corpus, e.engine, e.model, canonical_json(dict(e.sampling)),
                canonical_json(dict(e.settings)), e.snapshot, canonical_json(dict(e.tool_versions)),
                e.reward, canonical_json(dict(e.components)), e.span_f1, e.turns, e.calls,
                e.invalid_calls, e.end_reason, canonical_json(dict(e.trajectory)), e.created_at or at,
                e.decision, e.corrected_from, e.corrected_turn,
            )
        )  # fmt: skip
    if rows:
        cur.executemany(f"INSERT INTO episodes ({_COLUMNS}) VALUES ({', '.join('?' * 21)})", rows)
    return len(rows)


def stored_blueprints(cur: duckdb.DuckDBPyConnection, engine: str, model: str) -> set[str]:
    """The blueprints that have episodes of this engine and model (a second rollout skips them)."""
    rows = cur.execute(
        "SELECT DISTINCT blueprint_id FROM episodes WHERE engine = ? AND model = ?", [engine, model]
    ).fetchall()
    return {str(r[0]) for r in rows}


def _episode(row: Sequence[Any]) -> StoredEpisode:
    return StoredEpisode(
        blueprint_id=row[1],
        corpus=row[2],
        engine=row[3],
        model=row[4],
        sampling=json.loads(row[5]),
        settings=json.loads(row[6]),
        snapshot=row[7],
        tool_versions=json.loads(row[8]),
        reward=float(row[9]),
        components=json.loads(row[10]),
        span_f1=float(row[11]),
        turns=int(row[12]),
        calls=int(row[13]),
        invalid_calls=int(row[14]),
        end_reason=row[15],
        trajectory=json.loads(row[16]),
        created_at=row[17],
        decision=row[18],
        corrected_from=row[19],
        corrected_turn=row[20],
    )


def _select() -> str:
    cols = _COLUMNS
    for column in ("sampling", "settings", "tool_versions", "components", "trajectory"):
        cols = cols.replace(f"{column},", f"CAST({column} AS VARCHAR),")
    return cols


def list_episodes(
    cur: duckdb.DuckDBPyConnection,
    *,
    blueprint_id: str | None = None,
    decision: str | None = None,
    limit: int = 1000,
    offset: int = 0,
) -> list[StoredEpisode]:
    """Episodes in the order they were stored (of one blueprint, in one review state: 'accept',
    'reject', 'conflict', when given)."""
    clauses, params = [], []
    for column, value in (("blueprint_id", blueprint_id), ("decision", decision)):
        if value:
            clauses.append(f"{column} = ?")
            params.append(value)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    rows = cur.execute(
        f"SELECT {_select()} FROM episodes {where} ORDER BY seq LIMIT ? OFFSET ?",
        [*params, limit, offset],
    ).fetchall()
    return [_episode(r) for r in rows]


def get_episode(cur: duckdb.DuckDBPyConnection, episode_id: str) -> StoredEpisode | None:
    rows = cur.execute(
        f"SELECT {_select()} FROM episodes WHERE episode_id = ?", [episode_id]
    ).fetchall()
    return _episode(rows[0]) if rows else None


def accepted_episodes(cur: duckdb.DuckDBPyConnection) -> list[StoredEpisode]:
    """Episodes their review resolved accepted, on a corpus that is present, not in open drift
    (the export rule); in the order they were stored."""
    rows = cur.execute(
        f"SELECT {_select()} FROM episodes WHERE decision = 'accept' AND corpus IN "
        "(SELECT unnest(?::VARCHAR[])) AND episode_id NOT IN "
        f"(SELECT item_id FROM drift WHERE {OPEN_DRIFT_SQL}) ORDER BY seq",
        [list_corpora()],
    ).fetchall()
    return [_episode(r) for r in rows]


def accepted_corpus_gone(cur: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Accepted episodes whose corpus is not present, counted by corpus (left out of exports)."""
    rows = cur.execute(
        "SELECT corpus, count(*) FROM episodes WHERE decision = 'accept' AND corpus NOT IN "
        "(SELECT unnest(?::VARCHAR[])) GROUP BY corpus ORDER BY corpus",
        [list_corpora()],
    ).fetchall()
    return {str(corpus): int(n) for corpus, n in rows}


def count_episodes(cur: duckdb.DuckDBPyConnection) -> int:
    row = cur.execute("SELECT count(*) FROM episodes").fetchone()
    return int(row[0]) if row else 0


def corrected_episodes(cur: duckdb.DuckDBPyConnection) -> list[StoredEpisode]:
    """Every corrected episode (`gym.correct`) whose review did not reject it, in the order they
    were stored: the step-level preference export's rows (`dpo-steps`)."""
    rows = cur.execute(
        f"SELECT {_select()} FROM episodes WHERE corrected_from IS NOT NULL "
        "AND decision IS DISTINCT FROM 'reject' ORDER BY seq"
    ).fetchall()
    return [_episode(r) for r in rows]
