"""Counts, rates and chart data for the Overview page (read in one snapshot): the proposals' with
every queue's reviewers and agreement (`dashboard_stats`), and one queue's own (`queue_stats`,
the page's queue selector); and the store's fingerprint for export manifests."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any, Final, TypeVar

import duckdb
import krippendorff
import numpy as np

from codesearch_core.models import canonical_json, sha256_hex
from codesearch_core.store.queries import review_settings
from codesearch_core.store.queue_kinds import PROPOSAL, QueueKind
from codesearch_core.store.rows import first_row
from codesearch_core.store.schema import SCHEMA_VERSION
from codesearch_core.store.types import (
    Agreement,
    DashboardStats,
    QueueGroup,
    QueueStats,
    StoreCounts,
)

T = TypeVar("T")

HISTOGRAM_BUCKETS: Final = 10
TOP_KINDS: Final = 10


def counts(cur: duckdb.DuckDBPyConnection) -> StoreCounts:
    row = first_row(
        cur.execute(
            "SELECT (SELECT count(*) FROM blueprints), count(*), count(*) FILTER (WHERE valid), "
            "(SELECT count(*) FROM executions), "
            "(SELECT count(*) FROM grades WHERE span_f1 IS NOT NULL), "
            "count(*) FILTER (WHERE decision IS NULL), count(*) FILTER (WHERE decision = 'accept'), "
            "count(*) FILTER (WHERE decision = 'reject'), "
            "count(*) FILTER (WHERE decision IS NULL AND id IN "
            "(SELECT item_id FROM votes WHERE kind = 'proposal' AND action = 'skip')), "
            "(SELECT count(*) FROM decisions), count(*) FILTER (WHERE decision = 'conflict'), "
            "(SELECT count(*) FROM episodes) "
            "FROM proposals"
        )
    )
    assert row is not None
    return StoreCounts(*(int(x) for x in row))


def _rate(num: float, den: float) -> float | None:
    return num / den if den else None


def _snapshot(cur: duckdb.DuckDBPyConnection, read: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
    # One transaction: every figure comes from the same snapshot even while reviewers write.
    cur.execute("BEGIN TRANSACTION")
    try:
        return read(cur)
    finally:
        cur.execute("ROLLBACK")


def dashboard_stats(cur: duckdb.DuckDBPyConnection) -> DashboardStats:
    return _snapshot(cur, _dashboard_stats)


def queue_stats(cur: duckdb.DuckDBPyConnection, kind: QueueKind) -> QueueStats:
    """The figures of `kind`'s queue (`QueueStats`), in one snapshot as `dashboard_stats`'."""
    return _snapshot(cur, lambda c: _queue_stats(c, kind))


def _queue_stats(cur: duckdb.DuckDBPyConnection, kind: QueueKind) -> QueueStats:
    # One pass over the kind's table: its groups (one group of all when it has none) by state.
    key, label = kind.groups or ("''", "''")
    rows = cur.execute(
        f"SELECT {key}, any_value({label}), count(*), count(*) FILTER (WHERE decision IS NULL), "
        "count(*) FILTER (WHERE decision = 'accept'), count(*) FILTER (WHERE decision = 'reject'), "
        f"count(*) FILTER (WHERE decision = 'conflict') FROM {kind.table} p GROUP BY 1 "
        "ORDER BY 3 DESC, 1"
    ).fetchall()
    groups = tuple(QueueGroup(str(k), str(n), *(int(x) for x in xs)) for k, n, *xs in rows)
    items, still_open, accepted, rejected, conflicts = (
        sum(getattr(g, f) for g in groups)
        for f in ("items", "open", "accepted", "rejected", "conflicts")
    )
    return QueueStats(
        kind=kind.name,
        items=items,
        open=still_open,
        accepted=accepted,
        rejected=rejected,
        conflicts=conflicts,
        decisions_per_day=_decisions_per_day(cur, kind.name),
        agreement=agreement(cur, conflicts=conflicts, kind=kind.name),
        reviewers=tuple((r, a, x, s) for r, _, a, x, s in _reviewer_votes(cur, kind.name)),
        groups=groups if kind.groups else (),
    )


def _decisions_per_day(
    cur: duckdb.DuckDBPyConnection, kind: str
) -> tuple[tuple[date, str, int], ...]:
    """(day, action, events) of `kind`'s decision events, undos too."""
    rows = cur.execute(
        "SELECT CAST(ts AS DATE), action, count(*) FROM decisions WHERE kind = ? "
        "GROUP BY ALL ORDER BY 1, 2",
        [kind],
    ).fetchall()
    return tuple((d, str(a), int(n)) for d, a, n in rows)


def _reviewer_votes(
    cur: duckdb.DuckDBPyConnection, kind: str | None = None
) -> list[tuple[str, str, int, int, int]]:
    """(reviewer, kind, accepts, rejects, skips) of each reviewer's live votes, of `kind` (None:
    every kind), by reviewer and kind."""
    rows = cur.execute(
        "SELECT reviewer, kind, count(*) FILTER (WHERE action = 'accept'), "
        "count(*) FILTER (WHERE action = 'reject'), count(*) FILTER (WHERE action = 'skip') "
        "FROM votes WHERE ? IS NULL OR kind = ? GROUP BY 1, 2 ORDER BY 1, 2",
        [kind, kind],
    ).fetchall()
    return [(str(r), str(k), int(a), int(x), int(s)) for r, k, a, x, s in rows]


def _dashboard_stats(cur: duckdb.DuckDBPyConnection) -> DashboardStats:
    c = counts(cur)
    # The grade cached on proposals (see store_schema) serves the mean and the histogram in one scan.
    buckets = ", ".join(
        # least() skips NULLs (least(NULL, 9) is 9), so ungraded rows are excluded first.
        f"count(*) FILTER (WHERE span_f1 IS NOT NULL AND least(CAST(floor(span_f1 * "
        f"{HISTOGRAM_BUCKETS}) AS INTEGER), {HISTOGRAM_BUCKETS - 1}) = {i})"
        for i in range(HISTOGRAM_BUCKETS)
    )
    f1 = first_row(cur.execute(f"SELECT avg(span_f1), {buckets} FROM proposals"))
    assert f1 is not None
    # One pass over proposals x blueprints serves the acceptance table and the confusion matrix.
    by_tools = cur.execute(
        "SELECT b.tool, b.language, coalesce(p.tool, 'invalid'), p.decision, count(*) "
        "FROM proposals p JOIN blueprints b ON b.seq = p.blueprint_seq GROUP BY ALL"
    ).fetchall()
    acceptance: dict[tuple[str, str], list[int]] = {}
    confusion: dict[tuple[str, str], int] = {}
    for tool, language, proposed, decision, n in by_tools:
        confusion[(tool, proposed)] = confusion.get((tool, proposed), 0) + int(n)
        if decision in ("accept", "reject"):
            cell = acceptance.setdefault((tool, language), [0, 0])
            cell[0 if decision == "accept" else 1] += int(n)
    mutations = cur.execute(
        "SELECT mutation_kind, count(*) FROM proposals WHERE decision = 'reject' "
        f"AND mutation_kind IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT {TOP_KINDS}"
    ).fetchall()
    errors = cur.execute(
        "SELECT coalesce(e.error_kind, CASE WHEN NOT p.valid THEN 'invalid_call' END) AS kind, "
        "count(*) FROM (SELECT seq, valid FROM proposals WHERE decision = 'reject') p "
        "LEFT JOIN executions e ON e.proposal_seq = p.seq WHERE kind IS NOT NULL "
        f"GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT {TOP_KINDS}"
    ).fetchall()
    # Every queue's votes (issue 39: the table counted proposals only); proposals' own figures
    # stay where the charts above read them.
    by_queue = _reviewer_votes(cur)
    reviewers = tuple((r, a, x, s) for r, k, a, x, s in by_queue if k == PROPOSAL)
    queues = sorted({k for _, k, *_ in by_queue} | {PROPOSAL})
    in_conflict: dict[str, int] = dict(
        cur.execute(
            "SELECT kind, count(*) FROM (SELECT 'episode' AS kind FROM episodes WHERE decision = "
            "'conflict' UNION ALL SELECT 'qa' FROM qa_items WHERE decision = 'conflict') GROUP BY 1"
        ).fetchall()
    )
    proposals = agreement(cur, conflicts=c.conflicts)
    return DashboardStats(
        reviewers=reviewers,
        reviewers_by_queue=tuple(by_queue),
        agreement=proposals,
        agreement_by_queue=tuple(
            (
                q,
                proposals
                if q == "proposal"
                else agreement(cur, conflicts=in_conflict.get(q, 0), kind=q),
            )
            for q in queues
        ),
        review_settings=review_settings(cur),
        counts=c,
        acceptance_rate=_rate(c.accepted, c.accepted + c.rejected),
        valid_rate=_rate(c.valid, c.proposals),
        mean_span_f1=None if f1[0] is None else float(f1[0]),
        # The proposals' own: the chart's bars open the proposals filtered by their action.
        decisions_per_day=_decisions_per_day(cur, PROPOSAL),
        acceptance_by_tool_language=tuple(
            (tool, lang, a, r) for (tool, lang), (a, r) in sorted(acceptance.items())
        ),
        span_f1_histogram=tuple(
            (i / HISTOGRAM_BUCKETS, (i + 1) / HISTOGRAM_BUCKETS, int(f1[1 + i]))
            for i in range(HISTOGRAM_BUCKETS)
        ),
        tool_confusion=tuple((r, p, n) for (r, p), n in sorted(confusion.items())),
        reject_mutation_kinds=tuple((str(k), int(n)) for k, n in mutations),
        reject_error_kinds=tuple((str(k), int(n)) for k, n in errors),
    )


def agreement(
    cur: duckdb.DuckDBPyConnection, *, conflicts: int, kind: str = "proposal"
) -> Agreement:
    """Agreement over the items of `kind` with two or more accept/reject votes (`Agreement`)."""
    rows = cur.execute(
        "SELECT v.item_id, v.reviewer, v.action = 'accept' FROM votes v "
        "WHERE v.kind = ? AND v.action IN ('accept', 'reject') AND v.item_id IN "
        "(SELECT item_id FROM votes WHERE kind = ? AND action IN ('accept', 'reject') "
        "GROUP BY 1 HAVING count(*) >= 2)",
        [kind, kind],
    ).fetchall()
    if not rows:
        return Agreement(0, None, None, conflicts)
    items = sorted({r[0] for r in rows})
    reviewers = sorted({r[1] for r in rows})
    col = {item: i for i, item in enumerate(items)}
    row_of = {who: i for i, who in enumerate(reviewers)}
    # Reviewers x items, 1 accept / 0 reject / NaN not reviewed: krippendorff's reliability_data.
    data = np.full((len(reviewers), len(items)), np.nan)
    for item, who, accepted in rows:
        data[row_of[who], col[item]] = 1.0 if accepted else 0.0
    per_item = [data[:, j][~np.isnan(data[:, j])] for j in range(len(items))]
    agreeing = sum(1 for votes in per_item if votes.min() == votes.max())
    alpha: float | None = None
    if len(items) >= 2 and len(np.unique(data[~np.isnan(data)])) > 1:
        alpha = float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    return Agreement(len(items), agreeing / len(items), alpha, conflicts)


def fingerprint(cur: duckdb.DuckDBPyConnection, path: Path) -> dict[str, Any]:
    row = first_row(
        cur.execute(
            "SELECT (SELECT count(*) FROM blueprints), (SELECT count(*) FROM blueprint_revisions), "
            "(SELECT count(*) FROM proposals), (SELECT coalesce(max(seq), 0) FROM proposals), "
            "(SELECT count(*) FROM executions), "
            "(SELECT coalesce(CAST(max(executed_at) AS VARCHAR), '') FROM executions), "
            "(SELECT count(*) FROM decisions), (SELECT coalesce(max(event_id), 0) FROM decisions)"
        )
    )
    assert row is not None
    state = dict(
        zip(
            (
                "blueprints",
                "blueprint_revisions",
                "proposals",
                "last_proposal_seq",
                "executions",
                "last_execution_at",
                "decision_events",
                "last_event_id",
            ),
            row,
            strict=True,
        )
    )
    return {
        "path": str(path),
        "schema_version": SCHEMA_VERSION,
        "state": state,
        "state_sha256": sha256_hex(canonical_json(state)),
    }
