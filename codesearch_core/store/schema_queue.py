"""Schema version 13 (`store.schema` replays it): one queue model for every kind of item (issue 29).

Until v12 the decision log, the votes and the leases were the proposals' alone; drafts kept a
status and drift a resolution of their own, without skip or undo. From v13 every decision, vote
and lease names the kind of item it is about (`store.queue_kinds`: proposal, draft, drift,
episode), so the same log, votes, leases and undo serve every queue. A drift item's id is the id of
the proposal (or blueprint) that drifted, so the kind is part of each key. Each kind's table
caches the item's state the same way `proposals` does (`decision`, `decision_event_id`, `n_votes`,
and `version`, bumped by every write about the item).

Existing rows are the proposals'; a draft's or a drift item's decision made before v13 becomes an
event of its kind (with its vote), so it can be undone like any other.
"""

from __future__ import annotations

from typing import Final

#: A decision event that no undo cancelled (over `decisions`, unaliased).
LIVE_EVENT_SQL: Final = "event_id NOT IN (SELECT undoes FROM decisions WHERE undoes IS NOT NULL)"


def _rekeyed(table: str, columns: str, key: str, kind_sql: str) -> tuple[str, ...]:
    """Rebuild `table` with a `kind` column in its primary key (DuckDB cannot alter a key)."""
    return (
        f"DROP INDEX IF EXISTS {table}_item",
        f"CREATE TABLE {table}_v13 ({columns}, kind VARCHAR NOT NULL DEFAULT 'proposal', "
        f"PRIMARY KEY (kind, {key}))",
        f"INSERT INTO {table}_v13 SELECT *, {kind_sql} FROM {table}",
        f"DROP TABLE {table}",
        f"ALTER TABLE {table}_v13 RENAME TO {table}",
        f"CREATE INDEX {table}_item ON {table} (item_id)",
    )


#: The drift resolutions as queue actions: A keeps the first answer, X the second (the keys of
#: the Drift card), by the kind of item that drifted.
DRIFT_ACTIONS_SQL: Final = (
    "CASE WHEN (kind = 'proposal' AND resolution = 'kept') "
    "OR (kind = 'reference' AND resolution = 'updated') THEN 'accept' ELSE 'reject' END"
)

V13: Final[tuple[str, ...]] = (
    "ALTER TABLE decisions ADD COLUMN kind VARCHAR DEFAULT 'proposal'",
    "CREATE INDEX decisions_reviewer ON decisions (reviewer, kind)",
    *_rekeyed(
        "votes",
        "item_id VARCHAR NOT NULL, reviewer VARCHAR NOT NULL, action VARCHAR NOT NULL, "
        "event_id BIGINT NOT NULL",
        "item_id, reviewer",
        "'proposal'",
    ),
    *_rekeyed(
        "leases",
        "item_id VARCHAR NOT NULL, reviewer VARCHAR NOT NULL, expires_at TIMESTAMP NOT NULL",
        "item_id, reviewer",
        # Drafts were leased in the same table before v13.
        "CASE WHEN item_id IN (SELECT id FROM drafts) THEN 'draft' ELSE 'proposal' END",
    ),
    # The item state every kind caches (proposals have had it since v3; episodes had `decision`).
    *(
        f"ALTER TABLE {table} ADD COLUMN {column}"
        for table, columns in (
            (
                "drafts",
                ("decision VARCHAR", "decision_event_id BIGINT", "n_votes INTEGER DEFAULT 0"),
            ),
            (
                "drift",
                (
                    "decision VARCHAR",
                    "decision_event_id BIGINT",
                    "n_votes INTEGER DEFAULT 0",
                    "version BIGINT DEFAULT 0",
                ),
            ),
            (
                "episodes",
                (
                    "decision_event_id BIGINT",
                    "n_votes INTEGER DEFAULT 0",
                    "version BIGINT DEFAULT 0",
                ),
            ),
        )
        for column in columns
    ),
    # Decided drafts and drift items: their decision as an event of their kind, and its vote.
    "INSERT INTO decisions (item_id, action, undoes, reviewer, note, reason, ts, final, kind) "
    "SELECT id, CASE status WHEN 'accepted' THEN 'accept' ELSE 'reject' END, NULL, "
    "coalesce(decided_by, 'unknown'), note, '', coalesce(decided_at, created_at), false, 'draft' "
    "FROM drafts WHERE status <> 'pending' ORDER BY seq",
    "INSERT INTO decisions (item_id, action, undoes, reviewer, note, reason, ts, final, kind) "
    f"SELECT item_id, {DRIFT_ACTIONS_SQL}, NULL, coalesce(resolved_by, 'unknown'), '', '', "
    "coalesce(resolved_at, found_at), false, 'drift' FROM drift WHERE resolution IS NOT NULL "
    "ORDER BY found_at, item_id",
    "INSERT INTO votes (item_id, reviewer, action, event_id, kind) "
    "SELECT item_id, reviewer, action, event_id, kind FROM decisions WHERE kind IN ('draft', 'drift')",
    "UPDATE drafts SET decision = d.action, decision_event_id = d.event_id, n_votes = 1 "
    "FROM decisions d WHERE d.kind = 'draft' AND d.item_id = drafts.id",
    "UPDATE drift SET decision = d.action, decision_event_id = d.event_id, n_votes = 1 "
    "FROM decisions d WHERE d.kind = 'drift' AND d.item_id = drift.item_id",
    "CREATE INDEX episodes_decision ON episodes (decision)",
)


def item_state_update(
    *, table: str, id_column: str, kind: str, reviews_per_item: int, item_filter: str = ""
) -> str:
    """An UPDATE that sets `table`'s `decision`, `decision_event_id` and `n_votes` from the votes
    and final decisions of `kind`: the definition of an item's state, for every kind.

    A lead's final decision (the latest one no undo cancelled) settles the item. Otherwise, with
    at least `reviews_per_item` accept/reject votes it is resolved when they agree and a
    'conflict' when they do not; with fewer it is open (NULL). Skips are votes that say "not me",
    not reviews. `item_filter` ("= ?" or "IN (...)") limits it to some items; the caller binds its
    parameter three times (votes, finals, items).
    """
    n = int(reviews_per_item)
    of_kind = f"kind = '{kind}'"
    votes_where = f"AND item_id {item_filter}" if item_filter else ""
    items_where = f"WHERE p.{id_column} {item_filter}" if item_filter else ""
    return f"""
    UPDATE {table} SET decision = s.decision, decision_event_id = s.event_id, n_votes = s.n
    FROM (
        SELECT p.{id_column} AS id,
               CASE WHEN f.action IS NOT NULL THEN f.action
                    WHEN coalesce(v.n, 0) >= {n} AND v.kinds = 1 THEN v.one
                    WHEN coalesce(v.n, 0) >= {n} THEN 'conflict' END AS decision,
               CASE WHEN f.action IS NOT NULL THEN f.event_id
                    WHEN coalesce(v.n, 0) >= {n} AND v.kinds = 1 THEN v.last END AS event_id,
               coalesce(v.n, 0) AS n
        FROM {table} p
        LEFT JOIN (
            SELECT item_id, count(*) AS n, count(DISTINCT action) AS kinds, min(action) AS one,
                   max(event_id) AS last
            FROM votes WHERE {of_kind} {votes_where} AND action IN ('accept', 'reject')
            GROUP BY item_id
        ) v ON v.item_id = p.{id_column}
        LEFT JOIN (
            SELECT item_id, arg_max(action, event_id) AS action, max(event_id) AS event_id
            FROM decisions
            WHERE {of_kind} AND final AND {LIVE_EVENT_SQL} {votes_where}
            GROUP BY item_id
        ) f ON f.item_id = p.{id_column}
        {items_where}
    ) s
    WHERE {table}.{id_column} = s.id
    """
