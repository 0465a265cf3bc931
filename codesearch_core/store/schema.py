"""The store's tables and their forward migrations.

`MIGRATIONS[i]` takes a file from schema version `i` to `i + 1`. A migration is appended, never
edited: files written by older builds replay only the steps they lack. Timestamps are naive UTC
`TIMESTAMP`s (fetching `TIMESTAMPTZ` would need pytz), written by Python, not by `now()`.

Decisions are an append-only event log. An `undo` event names, in `undoes`, the event it cancels
(the reviewer's own most recent event on the item that no undo cancelled yet); `undoes` is UNIQUE
so two undos at once cannot both cancel the same event. A reviewer's vote on an item is their latest
non-final, non-undo event on it that no undo names (`votes` caches it); a lead's final decision is
an accept/reject event with `final` set. The item's state, cached in `proposals.decision` (and the
event that settled it in `decision_event_id`, its accept/reject vote count in `n_votes`), follows
from them (`store.decisions`).

Deriving these from the log costs a scan of every event (20-40 ms at 300,000 proposals), too slow
for the review queue, hence the caches; likewise `span_f1` and `reward` cache the proposal's row in
`grades` (a semi-join on grades costs 10-20 ms). Each cache is written only in the transaction that
writes its source, and that transaction bumps the item's `version`, so two concurrent writes about
one item conflict (one retries on the new state) and the caches cannot drift;
`Store.check_caches` compares them with their sources. Joins use the integer `seq` columns: joining
300,000 rows on hash strings is 3-4x slower.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final

import duckdb

from codesearch_core.store import (
    schema_episodes,
    schema_evals,
    schema_guidelines,
    schema_qa,
    schema_queue,
    schema_steps,
)

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

#: What a grade depends on besides the run: the grading rule, the corpus and the expected spans, in
#: any order (the store writes each span as canonical JSON, so equal spans give equal text). Over
#: `blueprints b`. The rule's name is in it so that a new rule makes every stored grade stale, and
#: `Store` re-derives stale grades from the stored runs when it opens the file.
GRADING_RULE: Final = "coverage-1"
GRADING_KEY_SQL: Final = (
    f"sha256('{GRADING_RULE}' || chr(10) || b.corpus || chr(10) || "
    "CAST(list_sort(CAST(json_extract(b.expected, '$[*]') AS VARCHAR[])) AS VARCHAR))"
)


#: A decision event that no undo cancelled (over `decisions`, unaliased).
LIVE_EVENT_SQL: Final = schema_queue.LIVE_EVENT_SQL


def item_state_update(*, reviews_per_item: int, item_filter: str = "") -> str:
    """The proposals' `schema_queue.item_state_update`: an UPDATE that sets `proposals.decision`,
    `decision_event_id` and `n_votes` from their votes and final decisions."""
    return schema_queue.item_state_update(
        table="proposals",
        id_column="id",
        kind="proposal",
        reviews_per_item=reviews_per_item,
        item_filter=item_filter,
    )


_V3: Final[tuple[str, ...]] = (
    # v3: several reviewers. Each reviewer's decision on an item is kept as theirs (`votes`, a
    # cache of the decision log: their latest event on the item that no undo cancelled); the item's
    # own state (`proposals.decision`) is derived from the votes, the reviews an item needs
    # (`settings`) and a lead's final decision (`decisions.final`): NULL while it needs reviews,
    # 'accept'/'reject' once resolved, 'conflict' while reviewers disagree. Leases keep an item
    # shown to one reviewer away from others; `version` is bumped by every write about an item so
    # two concurrent writes about one item conflict and one retries on the new state. A grade
    # records the blueprint key (corpus + expected spans) it was computed against, so a grade made
    # before an edit is known to be stale.
    "ALTER TABLE decisions ADD COLUMN final BOOLEAN DEFAULT false",
    """
    CREATE TABLE votes (
        item_id VARCHAR NOT NULL,
        reviewer VARCHAR NOT NULL,
        action VARCHAR NOT NULL,
        event_id BIGINT NOT NULL,
        PRIMARY KEY (item_id, reviewer)
    )
    """,
    """
    INSERT INTO votes
    SELECT item_id, reviewer, arg_max(action, event_id), max(event_id) FROM decisions
    WHERE action <> 'undo'
      AND event_id NOT IN (SELECT undoes FROM decisions WHERE undoes IS NOT NULL)
    GROUP BY item_id, reviewer
    """,
    """
    CREATE TABLE leases (
        item_id VARCHAR NOT NULL,
        reviewer VARCHAR NOT NULL,
        expires_at TIMESTAMP NOT NULL,
        PRIMARY KEY (item_id, reviewer)
    )
    """,
    "CREATE TABLE settings (key VARCHAR PRIMARY KEY, value JSON NOT NULL)",
    "INSERT INTO settings VALUES ('reviews_per_item', '1'), ('lease_minutes', '5')",
    "ALTER TABLE proposals ADD COLUMN n_votes INTEGER DEFAULT 0",
    "ALTER TABLE proposals ADD COLUMN version BIGINT DEFAULT 0",
    "ALTER TABLE grades ADD COLUMN graded_against VARCHAR",
    # Until v3 an edit that changed what a grade depends on deleted the grade: every stored grade
    # is current.
    # The grading key and the item state as v3 defined them, written out: a migration replays
    # what its version meant, so a later change to GRADING_KEY_SQL or item_state_update (which
    # would come with its own migration) must not change what this one does.
    """
    UPDATE grades SET graded_against = (
        SELECT sha256(b.corpus || chr(10) || CAST(list_sort(CAST(json_extract(b.expected, '$[*]')
            AS VARCHAR[])) AS VARCHAR))
        FROM proposals p JOIN blueprints b ON b.seq = p.blueprint_seq
        WHERE p.seq = grades.proposal_seq
    )
    """,
    "DROP VIEW current_decisions",
    """
    UPDATE proposals SET decision = s.decision, decision_event_id = s.event_id, n_votes = s.n
    FROM (
        SELECT p.id,
               CASE WHEN f.action IS NOT NULL THEN f.action
                    WHEN coalesce(v.n, 0) >= 1 AND v.kinds = 1 THEN v.one
                    WHEN coalesce(v.n, 0) >= 1 THEN 'conflict' END AS decision,
               CASE WHEN f.action IS NOT NULL THEN f.event_id
                    WHEN coalesce(v.n, 0) >= 1 AND v.kinds = 1 THEN v.last END AS event_id,
               coalesce(v.n, 0) AS n
        FROM proposals p
        LEFT JOIN (
            SELECT item_id, count(*) AS n, count(DISTINCT action) AS kinds, min(action) AS one,
                   max(event_id) AS last
            FROM votes WHERE action IN ('accept', 'reject')
            GROUP BY item_id
        ) v ON v.item_id = p.id
        LEFT JOIN (
            SELECT item_id, arg_max(action, event_id) AS action, max(event_id) AS event_id
            FROM decisions
            WHERE final AND event_id NOT IN (SELECT undoes FROM decisions WHERE undoes IS NOT NULL)
            GROUP BY item_id
        ) f ON f.item_id = p.id
    ) s
    WHERE proposals.id = s.id
    """,
)

_V4: Final[tuple[str, ...]] = (
    # v4: the review card's point lookups by item (its votes, how often it was proposed) scanned
    # their tables: 14 ms of every card at 100,000 items. Their primary keys lead with the item but
    # DuckDB uses an index only for the whole key.
    "CREATE INDEX IF NOT EXISTS votes_item ON votes(item_id)",
    "CREATE INDEX IF NOT EXISTS sightings_proposal ON proposal_sightings(proposal_id)",
)

_V5: Final[tuple[str, ...]] = (
    # v5: who may do what, and who did what. `users` holds each person's role (`access.Role`);
    # `audit` is append-only: one row per change, written in the change's own transaction, so
    # there is no change without its row. `detail` is a JSON object whose keys depend on `action`.
    """
    CREATE TABLE users (
        name VARCHAR PRIMARY KEY,
        role VARCHAR NOT NULL,
        added_by VARCHAR NOT NULL,
        added_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL
    )
    """,
    "CREATE SEQUENCE audit_seq START 1",
    """
    CREATE TABLE audit (
        id BIGINT NOT NULL DEFAULT nextval('audit_seq'),
        ts TIMESTAMP NOT NULL,
        actor VARCHAR NOT NULL,
        role VARCHAR NOT NULL,
        mode VARCHAR NOT NULL,
        action VARCHAR NOT NULL,
        target VARCHAR NOT NULL,
        detail JSON NOT NULL
    )
    """,
)

_V6: Final[tuple[str, ...]] = (
    # v6: what the runner warned about an ok run (`RunResult.warnings`: a pattern ast-grep read as
    # another construct), a JSON list of sentences; runs stored before have none.
    "ALTER TABLE executions ADD COLUMN warnings JSON DEFAULT '[]'",
)

_V7: Final[tuple[str, ...]] = (
    # v7: a blueprint's counter-calls (the natural wrong calls its author wrote down), a plan
    # seed's plan, and grades
    # by coverage: the grading key now names the rule, so every older grade is stale and is graded
    # again from its stored run when the store opens (`Store.regrade_stale`).
    "ALTER TABLE blueprints ADD COLUMN counter_calls JSON DEFAULT '[]'",
    # A plan seed's reference plan (its `reference_call` column holds the plan's last step).
    "ALTER TABLE blueprints ADD COLUMN plan JSON",
)

_V8: Final[tuple[str, ...]] = (
    # v8: draft blueprints synthesized from a corpus (`codesearch synthesize`), each with where it
    # came from (mined rule, engine, prompt, sample) and its review state; an accepted draft names
    # the blueprint it became. One row per draft, written in its own transaction.
    "CREATE SEQUENCE draft_seq START 1",
    """
    CREATE TABLE drafts (
        id VARCHAR PRIMARY KEY,
        seq BIGINT NOT NULL DEFAULT nextval('draft_seq'),
        corpus VARCHAR NOT NULL,
        language VARCHAR NOT NULL,
        tool VARCHAR NOT NULL,
        intent VARCHAR NOT NULL,
        difficulty VARCHAR NOT NULL,
        reference_call JSON NOT NULL,
        expected JSON NOT NULL,
        findings_hash VARCHAR NOT NULL,
        tags VARCHAR[] NOT NULL,
        rule VARCHAR NOT NULL,
        engine VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        prompt VARCHAR NOT NULL,
        sample JSON NOT NULL,
        reference_reward DOUBLE NOT NULL,
        baseline_reward DOUBLE,
        status VARCHAR NOT NULL DEFAULT 'pending',
        blueprint_id VARCHAR,
        decided_by VARCHAR,
        decided_at TIMESTAMP,
        note VARCHAR NOT NULL DEFAULT '',
        version BIGINT NOT NULL DEFAULT 0,
        created_at TIMESTAMP NOT NULL
    )
    """,
)

_V9: Final[tuple[str, ...]] = (
    # v9: pinning. A blueprint records the corpus snapshot its expected spans were computed on,
    # and a run the snapshot and the tool versions it ran with (`corpora.snapshot`), so a finding
    # made on other bytes or by another ast-grep is known to be stale. `drift` holds what
    # `codesearch verify --stale` found changed: an accepted proposal's findings, or a reference
    # call's, before and after, until someone decides (`resolution`); an accepted item in drift is
    # held out of exports until then. Rows made before v9 have no snapshot: all of them are stale.
    "ALTER TABLE blueprints ADD COLUMN snapshot_id VARCHAR",
    "ALTER TABLE blueprints ADD COLUMN tool_versions JSON",
    "ALTER TABLE executions ADD COLUMN snapshot_id VARCHAR",
    "ALTER TABLE executions ADD COLUMN tool_versions JSON",
    """
    CREATE TABLE drift (
        item_id VARCHAR PRIMARY KEY,
        kind VARCHAR NOT NULL CHECK (kind IN ('proposal', 'reference')),
        blueprint_id VARCHAR NOT NULL,
        old_findings JSON NOT NULL,
        new_findings JSON NOT NULL,
        old_snapshot VARCHAR,
        new_snapshot VARCHAR,
        old_tools JSON,
        new_tools JSON,
        found_at TIMESTAMP NOT NULL,
        resolution VARCHAR,
        resolved_by VARCHAR,
        resolved_at TIMESTAMP
    )
    """,
)

MIGRATIONS: Final[tuple[tuple[str, ...], ...]] = (
    _V1,
    _V2,
    _V3,
    _V4,
    _V5,
    _V6,
    _V7,
    _V8,
    _V9,
    schema_evals.V10,
    schema_evals.V11,
    schema_episodes.V12,
    schema_queue.V13,
    schema_guidelines.V14,
    schema_qa.V15,
    schema_steps.V16,
)
SCHEMA_VERSION: Final = len(MIGRATIONS)

STORE_TABLES: Final = frozenset(
    {"schema_version", "blueprints", "proposals", "executions", "grades", "decisions"}
)  # the tables every version has (a store is recognized by them)


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
