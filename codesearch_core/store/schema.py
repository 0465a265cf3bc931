"""The store's tables and their forward migrations.

`MIGRATIONS[i]` takes a file from schema version `i` to `i + 1`. A migration is appended, never
edited: files written by older builds replay only the steps they lack. Timestamps are naive UTC
`TIMESTAMP`s (fetching `TIMESTAMPTZ` would need pytz), written by Python, not by `now()`.

Decisions are an append-only event log. An `undo` event names, in `undoes`, the event it cancels
(the item's most recent accept/reject/skip that no undo cancelled yet); `undoes` is UNIQUE so two
reviewers undoing at once cannot both cancel the same event. An item's current decision is its latest
non-undo event that no undo names: the `current_decisions` view is that definition.

Deriving it from the log costs a scan of every event (20-40 ms at 300,000 proposals), too slow for
the review queue, so `proposals.decision` / `decision_event_id` cache it; likewise `span_f1` and
`reward` cache the proposal's row in `grades` (a semi-join on grades costs 10-20 ms). Each cache is
written only in the transaction that writes its source, and that write makes two concurrent
decisions on one item conflict (one retries on the new state), so it cannot drift;
`Store.check_caches` compares them with their sources. Joins use the integer `seq` columns: joining
300,000 rows on hash strings is 3-4x slower.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final

import duckdb

_V1: Final[tuple[str, ...]] = (
    """
    CREATE TABLE schema_version (
        version INTEGER PRIMARY KEY,
        applied_at TIMESTAMP NOT NULL
    )
    """,
    "CREATE SEQUENCE blueprint_seq START 1",
    """
    CREATE TABLE blueprints (
        id VARCHAR PRIMARY KEY,
        seq BIGINT NOT NULL DEFAULT nextval('blueprint_seq'),
        content_hash VARCHAR NOT NULL UNIQUE,
        intent VARCHAR NOT NULL,
        intent_hash VARCHAR NOT NULL,
        corpus VARCHAR NOT NULL,
        language VARCHAR NOT NULL,
        tool VARCHAR NOT NULL,
        reference_call JSON NOT NULL,
        call_hash VARCHAR NOT NULL,
        expected JSON NOT NULL,
        tags VARCHAR[] NOT NULL,
        difficulty VARCHAR NOT NULL,
        notes VARCHAR NOT NULL,
        source VARCHAR NOT NULL,
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL
    )
    """,
    "CREATE SEQUENCE proposal_seq START 1",
    """
    CREATE TABLE proposals (
        id VARCHAR PRIMARY KEY,
        seq BIGINT NOT NULL DEFAULT nextval('proposal_seq'),
        blueprint_id VARCHAR NOT NULL,
        blueprint_seq BIGINT NOT NULL,
        engine VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        sampling JSON NOT NULL,
        prompt VARCHAR NOT NULL,
        raw_text VARCHAR NOT NULL,
        call JSON,
        call_hash VARCHAR,
        tool VARCHAR,
        valid BOOLEAN NOT NULL,
        error VARCHAR NOT NULL,
        repairs VARCHAR[] NOT NULL,
        latency_s DOUBLE NOT NULL,
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        finish_reason VARCHAR,
        mutation_kind VARCHAR,
        parent_id VARCHAR,
        created_at TIMESTAMP NOT NULL,
        decision VARCHAR,
        decision_event_id BIGINT,
        span_f1 DOUBLE,
        reward DOUBLE
    )
    """,
    """
    CREATE TABLE executions (
        proposal_seq BIGINT PRIMARY KEY,
        proposal_id VARCHAR NOT NULL,
        ok BOOLEAN NOT NULL,
        findings JSON NOT NULL,
        n_findings INTEGER NOT NULL,
        return_code INTEGER,
        stderr VARCHAR NOT NULL,
        elapsed_s DOUBLE NOT NULL,
        truncated BOOLEAN NOT NULL,
        error_kind VARCHAR,
        error VARCHAR NOT NULL,
        executed_at TIMESTAMP NOT NULL
    )
    """,
    """
    CREATE TABLE grades (
        proposal_seq BIGINT PRIMARY KEY,
        proposal_id VARCHAR NOT NULL,
        file_iou DOUBLE,
        span_precision DOUBLE,
        span_recall DOUBLE,
        span_f1 DOUBLE,
        n_predicted INTEGER,
        n_expected INTEGER,
        n_matched INTEGER,
        reward DOUBLE NOT NULL,
        components JSON NOT NULL,
        graded_at TIMESTAMP NOT NULL
    )
    """,
    "CREATE SEQUENCE decision_seq START 1",
    """
    CREATE TABLE decisions (
        event_id BIGINT PRIMARY KEY DEFAULT nextval('decision_seq'),
        item_id VARCHAR NOT NULL,
        action VARCHAR NOT NULL CHECK (action IN ('accept', 'reject', 'skip', 'undo')),
        undoes BIGINT UNIQUE,
        reviewer VARCHAR NOT NULL,
        note VARCHAR NOT NULL,
        reason VARCHAR NOT NULL,
        ts TIMESTAMP NOT NULL,
        CHECK ((action = 'undo') = (undoes IS NOT NULL))
    )
    """,
    "CREATE INDEX decisions_item ON decisions (item_id)",
    """
    CREATE VIEW current_decisions AS
    SELECT d.item_id,
           arg_max(d.action, d.event_id) AS action,
           max(d.event_id) AS event_id
    FROM decisions d
    WHERE d.action <> 'undo'
      AND d.event_id NOT IN (SELECT undoes FROM decisions WHERE undoes IS NOT NULL)
    GROUP BY d.item_id
    """,
)

_V2: Final[tuple[str, ...]] = (
    # v2: blueprint edits keep an audit trail, and a proposal seen again (another engine, another
    # import) records where it came from instead of being stored twice.
    """
    CREATE TABLE blueprint_revisions (
        blueprint_id VARCHAR NOT NULL,
        revision INTEGER NOT NULL,
        content_hash VARCHAR NOT NULL,
        data JSON NOT NULL,
        source VARCHAR NOT NULL,
        changed_at TIMESTAMP NOT NULL,
        PRIMARY KEY (blueprint_id, revision)
    )
    """,
    """
    INSERT INTO blueprint_revisions
    SELECT id, 1, content_hash,
           json_object('id', id, 'intent', intent, 'reference_call', reference_call,
                       'corpus', corpus, 'expected', expected, 'language', language,
                       'tags', tags, 'difficulty', difficulty, 'notes', notes),
           source, updated_at
    FROM blueprints
    """,
    """
    CREATE TABLE proposal_sightings (
        proposal_id VARCHAR NOT NULL,
        engine VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        seen_at TIMESTAMP NOT NULL
    )
    """,
    """
    INSERT INTO proposal_sightings SELECT id, engine, model, created_at FROM proposals
    """,
)

MIGRATIONS: Final[tuple[tuple[str, ...], ...]] = (_V1, _V2)
SCHEMA_VERSION: Final = len(MIGRATIONS)

STORE_TABLES: Final = frozenset(
    {"schema_version", "blueprints", "proposals", "executions", "grades", "decisions"}
)


def user_tables(conn: duckdb.DuckDBPyConnection) -> set[str]:
    rows = conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
    ).fetchall()
    return {str(r[0]) for r in rows}


def read_schema_version(conn: duckdb.DuckDBPyConnection) -> int:
    """0 for an empty database; the highest applied version otherwise."""
    if "schema_version" not in user_tables(conn):
        return 0
    rows = conn.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchall()
    return int(rows[0][0]) if rows else 0


def apply_migrations(
    conn: duckdb.DuckDBPyConnection, *, current: int, upto: int = SCHEMA_VERSION
) -> None:
    """Replay the steps from `current` to `upto`, each version in its own transaction."""
    for version in range(current + 1, upto + 1):
        conn.execute("BEGIN TRANSACTION")
        try:
            for statement in MIGRATIONS[version - 1]:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_version VALUES (?, ?)",
                [version, datetime.now(UTC).replace(tzinfo=None)],
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
