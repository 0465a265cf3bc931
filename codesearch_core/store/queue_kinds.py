"""The kinds of item a review queue holds, and what differs between them (issue 29).

Leasing, voting, skip, undo and the item state are one code path for every kind
(`store.decisions`); a kind says only where its items live (table, id column, order), how many
reviews settle one, who may decide it, what blocks an accept, and what happens when its state
settles or unsettles (`settle`): a draft accepted becomes a blueprint, a drift item is resolved,
and an undo takes that back. A new queue is a new entry here, not another copy of the queue code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Final

import duckdb

from codesearch_core.access import Action
from codesearch_core.corpora import list_corpora
from codesearch_core.errors import StoreError
from codesearch_core.models import DecisionAction
from codesearch_core.store import drafts as store_drafts
from codesearch_core.store import pinning
from codesearch_core.store import queries as store_queries
from codesearch_core.store import writes as store_writes
from codesearch_core.store.rows import first_row

Cursor = duckdb.DuckDBPyConnection

PROPOSAL: Final = "proposal"
DRAFT: Final = "draft"
DRIFT: Final = "drift"
EPISODE: Final = "episode"
#: A data set's QA sample (`store.qa`): accept = the item is correct, reject = it is not.
QA: Final = "qa"


@dataclass(frozen=True, slots=True)
class Settled:
    """An item's state changed: from `before` to `after` (None: open; 'accept', 'reject',
    'conflict'), by `reviewer`'s event (`note`, at `ts`)."""

    before: str | None
    after: str | None
    reviewer: str
    note: str
    ts: datetime
    #: The queue's own record_decision and undo_last (`store.decisions`), handed in: settling a
    #: drift item decides the proposal that drifted, and the queue code imports the kinds, never
    #: the other way round.
    decide: Callable[..., int]
    undo: Callable[..., tuple[str, int]]


@dataclass(frozen=True, slots=True)
class QueueKind:
    name: str
    table: str
    id_column: str
    #: The queue's order over the table aliased `p`.
    order_sql: str
    #: Reviews per item from the review settings; otherwise one settles it.
    shared_reviews: bool = True
    #: What a person needs to decide an item of this kind (accepting a draft: to author).
    decide: Action = Action.REVIEW
    accept: Action = Action.REVIEW
    #: Why an item cannot be accepted now, or None.
    accept_blocker: Callable[[Cursor, str], str | None] | None = None
    #: What the item's change of state does beyond the cached state (called inside the write).
    settle: Callable[[Cursor, str, Settled], None] | None = None


def _proposal_blocker(cur: Cursor, item_id: str) -> str | None:
    row = first_row(
        cur.execute(
            "SELECT p.valid, e.ok FROM proposals p LEFT JOIN executions e "
            "ON e.proposal_seq = p.seq WHERE p.id = ?",
            [item_id],
        )
    )
    if row is not None and not row[0]:
        return (
            f"proposal {item_id!r} has no valid tool call, so it cannot be accepted: reject it, "
            "or edit the call and accept the new proposal"
        )
    if row is not None and not row[1]:
        return (
            f"proposal {item_id!r} has not run without an error, so it cannot be accepted: "
            "run it (Verify), or reject it; only verified calls are training data"
        )
    return None


def episode_corpus_gone(corpus: str) -> bool:
    return corpus not in list_corpora()


def _episode_blocker(cur: Cursor, item_id: str) -> str | None:
    row = first_row(cur.execute("SELECT corpus FROM episodes WHERE episode_id = ?", [item_id]))
    if row is not None and episode_corpus_gone(str(row[0])):
        return (
            f"the corpus {row[0]!r} of this episode is gone, so it cannot be accepted (it stays "
            "in the store; add the corpus again to review it)"
        )
    return None


# --- drafts: accepted, a draft becomes a blueprint -------------------------------------------------


def _settle_draft(cur: Cursor, draft_id: str, s: Settled) -> None:
    draft = store_drafts.get_draft(cur, draft_id)
    assert draft is not None  # the caller bumped it
    if s.before == "accept" and draft.blueprint_id:
        _unmake_blueprint(cur, draft_id, draft.blueprint_id)
    made = None
    if s.after == "accept":
        blueprint = draft.to_blueprint()
        report = store_writes.add_blueprints(
            cur, [blueprint], source=store_drafts.DRAFT_SOURCE_PREFIX + draft_id, skip_bad=False
        )
        # The same blueprint authored before: the draft names that one.
        made = report.ids[0] if report.ids else blueprint.id
    status = {"accept": "accepted", "reject": "rejected"}.get(s.after or "", "pending")
    decided = status != "pending"
    cur.execute(
        "UPDATE drafts SET status = ?, blueprint_id = ?, decided_by = ?, decided_at = ?, note = ? "
        "WHERE id = ?",
        [status, made, s.reviewer if decided else None, s.ts if decided else None,
         s.note if decided else "", draft_id],
    )  # fmt: skip


def _unmake_blueprint(cur: Cursor, draft_id: str, blueprint_id: str) -> None:
    """Take back the blueprint an accepted draft made, while nothing was built on it yet."""
    row = first_row(cur.execute("SELECT source FROM blueprints WHERE id = ?", [blueprint_id]))
    if row is None or row[0] != store_drafts.DRAFT_SOURCE_PREFIX + draft_id:
        return  # the blueprint was authored before the draft: it stays
    used = first_row(
        cur.execute(
            "SELECT (SELECT count(*) FROM proposals WHERE blueprint_id = ?) "
            "+ (SELECT count(*) FROM episodes WHERE blueprint_id = ?)",
            [blueprint_id, blueprint_id],
        )
    )
    if used is not None and used[0]:
        raise StoreError(
            f"the blueprint {blueprint_id!r} made from this draft has proposals or episodes "
            "since, so the accept cannot be taken back: edit or retag the blueprint instead"
        )
    cur.execute("DELETE FROM blueprint_revisions WHERE blueprint_id = ?", [blueprint_id])
    cur.execute("DELETE FROM blueprints WHERE id = ?", [blueprint_id])


# --- drift: decided, an item in drift is resolved ---------------------------------------------------

#: A and X on the Drift card, by the kind of item that drifted: A keeps an accepted proposal or
#: takes a reference's new findings (`schema_queue.DRIFT_ACTIONS_SQL` says the same for old rows).
DRIFT_RESOLUTIONS: Final[dict[str, dict[str, str]]] = {
    "proposal": {"accept": "kept", "reject": "rejected"},
    "reference": {"accept": "updated", "reject": "kept"},
}


def drift_action(drift_kind: str, resolution: str) -> str:
    """The queue action ('accept' or 'reject') that resolves a `drift_kind` item this way."""
    for action, name in DRIFT_RESOLUTIONS[drift_kind].items():
        if name == resolution:
            return action
    allowed = ", ".join(DRIFT_RESOLUTIONS[drift_kind].values())
    raise StoreError(f"a {drift_kind} in drift is {allowed}, not {resolution!r}")


def _settle_drift(cur: Cursor, item_id: str, s: Settled) -> None:
    item = pinning.get_drift(cur, item_id)
    assert item is not None  # the caller bumped it
    if s.before in ("accept", "reject"):
        _unresolve_drift(cur, item, DRIFT_RESOLUTIONS[item.kind][s.before], s)
    if s.after not in ("accept", "reject"):
        return
    bp = store_queries.get_blueprint(cur, item.blueprint_id)
    resolution = DRIFT_RESOLUTIONS[item.kind][s.after]
    pinning.resolve_drift(cur, item_id, resolution, s.reviewer, s.ts)
    if item.kind == "proposal" and resolution == "rejected":
        s.decide(
            cur, item_id, DecisionAction.REJECT, s.reviewer, note=s.note,
            reason="drift: the findings changed", ts=s.ts, final=True,
        )  # fmt: skip
    elif item.kind == "reference" and bp is not None:
        if resolution == "updated":
            store_writes.upsert_blueprint(
                cur, replace(bp, expected=item.new_findings, snapshot=item.new_snapshot),
                source="drift",
            )  # fmt: skip
        pinning.mark_reference_current(cur, bp.id, item.new_snapshot, item.new_tools or "{}")


def _unresolve_drift(cur: Cursor, item: pinning.DriftItem, resolution: str, s: Settled) -> None:
    cur.execute(
        "UPDATE drift SET resolution = NULL, resolved_by = NULL, resolved_at = NULL "
        "WHERE item_id = ?",
        [item.item_id],
    )
    if item.kind == "proposal" and resolution == "rejected":
        s.undo(cur, s.reviewer, ts=s.ts, item_id=item.item_id, kind=PROPOSAL)
    elif item.kind == "reference":
        blueprint = store_queries.get_blueprint(cur, item.blueprint_id)
        if blueprint is not None and resolution == "updated":
            store_writes.upsert_blueprint(
                cur, replace(blueprint, expected=item.old_findings, snapshot=item.old_snapshot),
                source="drift",
            )  # fmt: skip
        if blueprint is not None:
            pinning.mark_reference_current(
                cur, item.blueprint_id, item.old_snapshot, item.old_tools or "{}"
            )


KINDS: Final[dict[str, QueueKind]] = {
    PROPOSAL: QueueKind(
        PROPOSAL, "proposals", "id", "p.seq", accept_blocker=_proposal_blocker
    ),
    DRAFT: QueueKind(
        DRAFT, "drafts", "id", "p.seq", shared_reviews=False, accept=Action.AUTHOR,
        settle=_settle_draft,
    ),
    DRIFT: QueueKind(
        DRIFT, "drift", "item_id", "p.found_at, p.item_id", shared_reviews=False,
        decide=Action.RESOLVE, accept=Action.RESOLVE, settle=_settle_drift,
    ),
    EPISODE: QueueKind(EPISODE, "episodes", "episode_id", "p.seq", accept_blocker=_episode_blocker),
    QA: QueueKind(QA, "qa_items", "qa_id", "p.seq"),
}  # fmt: skip


def kind_of(name: str) -> QueueKind:
    try:
        return KINDS[name]
    except KeyError:
        raise StoreError(f"unknown kind of item {name!r}: use one of {', '.join(KINDS)}") from None
