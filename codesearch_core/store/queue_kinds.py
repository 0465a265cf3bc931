"""The kinds of item a review queue holds, and what differs between them (issue 29).

Leasing, voting, skip, undo and the item state are one code path for every kind
(`store.decisions`); a kind says only where its items live (table, id column, order), how many
reviews settle one, who may decide it, what blocks an accept, and what happens when its state
settles or unsettles (`settle`): a draft accepted becomes a blueprint, a drift item is resolved,
and an undo takes that back. A new queue is a new entry here, not another copy of the queue code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any, Final

import duckdb

from codesearch_core.access import Action
from codesearch_core.corpora import list_corpora
from codesearch_core.errors import StoreError
from codesearch_core.models import DecisionAction
from codesearch_core.store import drafts as store_drafts
from codesearch_core.store import pinning
from codesearch_core.store import queries as store_queries
from codesearch_core.store import writes as store_writes
from codesearch_core.store.filters import (
    DraftFilters,
    DriftFilters,
    EpisodeFilters,
    ItemFilters,
    QAFilters,
    QueueFilters,
)
from codesearch_core.store.rows import first_row
from codesearch_core.store.schema import GRADING_KEY_SQL
from codesearch_core.store.text_match import LIKE
from codesearch_core.store.types import DecisionState

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
    #: What people call the queue (the Review page's picker) and one and many of its items ("3
    #: QA items"): a new kind is named here, with the rest of what it is.
    title: str = ""
    noun: tuple[str, str] = ("item", "items")
    #: Reviews per item from the review settings; otherwise one settles it.
    shared_reviews: bool = True
    #: What a person needs to decide an item of this kind (accepting a draft: to author).
    decide: Action = Action.REVIEW
    accept: Action = Action.REVIEW
    #: Why an item cannot be accepted now, or None.
    accept_blocker: Callable[[Cursor, str], str | None] | None = None
    #: What the item's change of state does beyond the cached state (called inside the write).
    settle: Callable[[Cursor, str, Settled], None] | None = None
    #: The card always reads its queue through its filters (proposals: the page's search, tags,
    #: grades); the other queues are taken in order from the reviewer's to-do set unless a
    #: filter is given.
    filtered: bool = False
    #: The audit trail's name for its decisions ("<log_as>.accept"); the kind's name when empty.
    log_as: str = ""
    #: Its filters' type, and each of its fields as SQL over the table `p` (`queries.item_where`;
    #: `decision` and `reviewer` are every kind's). Empty for a kind with a WHERE of its own.
    filters: type[ItemFilters] = QueueFilters
    filter_sql: Mapping[str, str] = field(default_factory=dict)
    #: What a bulk plan reads: the table `p` and what its accept rules join.
    plan_from: str = ""
    #: Why an item of a bulk accept is left out, first match wins, as SQL over `plan_from`: what
    #: `accept_blocker` says of one item, for every item of a plan at once. Their `?`s take
    #: `accept_params()`, read when the plan is made.
    accept_rules: tuple[tuple[str, str], ...] = ()
    accept_params: Callable[[], list[Any]] = list
    #: What the Overview breaks the queue's items down by, as (key, label) SQL over the table
    #: `p` (the QA queue: its data sets, each with its own error rate); None: no breakdown.
    groups: tuple[str, str] | None = None

    @property
    def audit_prefix(self) -> str:
        return self.log_as or self.name

    @property
    def plan_sql(self) -> str:
        return self.plan_from or f"{self.table} p"

    def check_filters(self, filters: ItemFilters | None) -> ItemFilters:
        """`filters` when they are this kind's (None: its defaults), else a clear StoreError."""
        if filters is None:
            return self.filters()
        if not isinstance(filters, self.filters):
            raise StoreError(
                f"the {self.name} queue takes {self.filters.__name__}, not {type(filters).__name__}"
            )
        return filters

    def where(
        self, filters: ItemFilters, *, now: datetime | None = None, reviews: int = 1
    ) -> tuple[str, list[Any]]:
        """The WHERE condition over the table `p` for this kind's `filters`."""
        f = self.check_filters(filters)
        if isinstance(f, QueueFilters):  # the proposals' own, with the blueprint's semi-join
            return store_queries.queue_where(f, now=now, reviews=reviews)
        return store_queries.item_where(
            f, self.filter_sql, kind=self.name, table=self.table, id_column=self.id_column,
            now=now, reviews=reviews,
        )  # fmt: skip

    def filter_keys(self) -> tuple[str, ...]:
        return tuple(f.name for f in fields(self.filters))

    def parse_filters(self, pairs: Sequence[str]) -> ItemFilters:
        """This kind's filters from `KEY=VALUE` texts (the command line's `--filter`; `state` is
        `decision`). A StoreError names the keys the kind takes, or what a value should be."""
        keys = self.filter_keys()
        values: dict[str, Any] = {}
        for pair in pairs:
            key, sep, raw = pair.partition("=")
            key = {"state": "decision"}.get(key.strip(), key.strip())
            if not sep or key not in keys:
                raise StoreError(
                    f"unknown filter {pair!r} for the {self.name} queue: use KEY=VALUE with a "
                    f"key of {', '.join(keys)} (state is decision)"
                )
            values[key] = _filter_value(self.filters, key, raw.strip())
        return self.filters(**values)


def _filter_value(filters: type[ItemFilters], key: str, raw: str) -> Any:
    kind = str(next(f.type for f in fields(filters) if f.name == key))
    if "DecisionState" in kind:
        try:
            return DecisionState(raw.lower())
        except ValueError:
            allowed = ", ".join(DecisionState)
            raise StoreError(f"{key}={raw!r}: use one of {allowed}") from None
    if "float" in kind:
        try:
            return float(raw)
        except ValueError:
            raise StoreError(f"{key}={raw!r}: use a number, e.g. {key}=1") from None
    if "bool" in kind:
        if raw.lower() not in ("true", "false", "1", "0", "yes", "no"):
            raise StoreError(f"{key}={raw!r}: use true or false")
        return raw.lower() in ("true", "1", "yes")
    if not raw:
        raise StoreError(f"{key}= needs a value")
    return raw


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
    # The status is the item state (`drafts.STATUS_SQL`); who settled it is kept beside it.
    decided = s.after in ("accept", "reject")
    cur.execute(
        "UPDATE drafts SET blueprint_id = ?, decided_by = ?, decided_at = ?, note = ? WHERE id = ?",
        [made, s.reviewer if decided else None, s.ts if decided else None,
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


def _settle_drift(cur: Cursor, item_id: str, s: Settled) -> None:
    item = pinning.get_drift(cur, item_id)
    assert item is not None  # the caller bumped it
    if s.before in ("accept", "reject"):
        _unresolve_drift(cur, item, DRIFT_RESOLUTIONS[item.kind][s.before], s)
    if s.after not in ("accept", "reject"):
        return
    # The item's resolution is its queue state (`pinning.OPEN_DRIFT_SQL`); what it does is here.
    bp = store_queries.get_blueprint(cur, item.blueprint_id)
    resolution = DRIFT_RESOLUTIONS[item.kind][s.after]
    if item.kind == "proposal" and resolution == "rejected":
        s.decide(
            cur, item_id, DecisionAction.REJECT, s.reviewer, note=s.note,
            reason="drift: the findings changed", ts=s.ts, final=True, kind=PROPOSAL,
        )  # fmt: skip
    elif item.kind == "reference" and bp is not None:
        if resolution == "updated":
            store_writes.upsert_blueprint(
                cur, replace(bp, expected=item.new_findings, snapshot=item.new_snapshot),
                source="drift",
            )  # fmt: skip
        pinning.mark_reference_current(cur, bp.id, item.new_snapshot, item.new_tools or "{}")


def _unresolve_drift(cur: Cursor, item: pinning.DriftItem, resolution: str, s: Settled) -> None:
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


#: A proposal a bulk accept leaves out, first match wins (what `_proposal_blocker` says of one):
#: it takes only a valid call that ran without an error, graded perfect against the blueprint as
#: it is now, not in drift.
_PROPOSAL_NOT_ACCEPTABLE: Final = (
    ("invalid call", "p.call IS NULL OR NOT p.valid"),
    ("not run yet", "e.ok IS NULL"),
    ("run failed", "NOT e.ok"),
    ("not graded", "g.span_f1 IS NULL"),
    ("grade stale", f"g.graded_against IS DISTINCT FROM {GRADING_KEY_SQL}"),
    ("in drift", f"NOT ({pinning.NOT_IN_DRIFT_SQL})"),
    ("grade not perfect", "g.span_f1 < 1.0"),
)
_PROPOSAL_PLAN_FROM: Final = (
    "proposals p JOIN blueprints b ON b.seq = p.blueprint_seq "
    "LEFT JOIN executions e ON e.proposal_seq = p.seq LEFT JOIN grades g ON g.proposal_seq = p.seq"
)
#: Each filter field as SQL over the kind's table `p` (`queries.item_where`).
_EPISODE_SQL: Final = {
    "min_reward": "p.reward >= ?",
    "max_reward": "p.reward <= ?",
    "engine": "p.engine = ?",
    "model": "p.model = ?",
    "corpus": "p.corpus = ?",
    # Every call's name in every turn, read from the trajectory: a filter a lead runs now and
    # then, not a hot path, so no derived column (and no migration) for it.
    "tool_used": "list_contains(json_extract_string(p.trajectory, '$.turns[*][*].name'), ?)",
    "end_reason": "p.end_reason = ?",
    "blueprint_id": "p.blueprint_id = ?",
    "text": f"(p.blueprint_id {LIKE} OR p.blueprint_id IN "
    f"(SELECT b.id FROM blueprints b WHERE b.intent {LIKE}))",
}
_QA_SQL: Final = {
    "rule": "p.item->>'rule' = ?",
    "source": "p.item->>'source' = ?",
    "split": "p.item->>'split' = ?",
    "dataset": "p.dataset_name = ?",
    "text": f"(p.item_id {LIKE} OR p.item->>'intent' {LIKE})",
}
_DRAFT_SQL: Final = {
    "rule": "p.rule = ?",
    "corpus": "p.corpus = ?",
    "language": "p.language = ?",
    "tool": "p.tool = ?",
    "text": f"(p.id {LIKE} OR p.intent {LIKE})",
}
_DRIFT_SQL: Final = {
    "drifted": "p.kind = ?",
    "text": f"(p.item_id {LIKE} OR p.blueprint_id {LIKE})",
}

KINDS: Final[dict[str, QueueKind]] = {
    PROPOSAL: QueueKind(
        PROPOSAL, "proposals", "id", "p.seq", "Proposals", ("proposal", "proposals"),
        accept_blocker=_proposal_blocker,
        filtered=True, log_as="decision", plan_from=_PROPOSAL_PLAN_FROM,
        accept_rules=_PROPOSAL_NOT_ACCEPTABLE,
    ),
    DRAFT: QueueKind(
        DRAFT, "drafts", "id", "p.seq", "Drafts", ("draft", "drafts"), shared_reviews=False, accept=Action.AUTHOR,
        settle=_settle_draft, filters=DraftFilters, filter_sql=_DRAFT_SQL,
    ),
    DRIFT: QueueKind(
        DRIFT, "drift", "item_id", "p.found_at, p.item_id", "Drift", ("drift item", "drift items"),
        shared_reviews=False,
        decide=Action.RESOLVE, accept=Action.RESOLVE, settle=_settle_drift, filters=DriftFilters,
        filter_sql=_DRIFT_SQL,
    ),
    EPISODE: QueueKind(
        EPISODE, "episodes", "episode_id", "p.seq", "Episodes", ("episode", "episodes"),
        accept_blocker=_episode_blocker,
        filters=EpisodeFilters, filter_sql=_EPISODE_SQL,
        accept_rules=(("corpus gone", "p.corpus NOT IN (SELECT unnest(?::VARCHAR[]))"),),
        accept_params=lambda: [list_corpora()],
    ),
    QA: QueueKind(
        QA, "qa_items", "qa_id", "p.seq", "QA", ("QA item", "QA items"), filters=QAFilters,
        filter_sql=_QA_SQL, groups=("p.dataset_id", "p.dataset_name"),
    ),
}  # fmt: skip


def kind_of(name: str) -> QueueKind:
    try:
        return KINDS[name]
    except KeyError:
        raise StoreError(f"unknown kind of item {name!r}: use one of {', '.join(KINDS)}") from None
