"""Schema version 12 (`store.schema` replays it): the gym's episodes (issue 30).

Kept apart from `store.schema` so that neither file grows past what one concern needs; like every
migration it is appended, never edited.
"""

from __future__ import annotations

from typing import Final

V12: Final[tuple[str, ...]] = (
    "CREATE SEQUENCE episode_seq START 1",
    # One agent episode kept by `codesearch rollouts`: its trajectory (every call with the
    # observation the gym returned, and the submit), its reward and components, and where it came
    # from (engine, model, sampling, the gym's settings, the corpus snapshot, the tools' versions).
    # `episode_id` hashes the blueprint and the calls in order, so the same episode sampled twice
    # is stored once. `decision` is the review queue's cached state (NULL: undecided).
    """
    CREATE TABLE episodes (
        episode_id VARCHAR PRIMARY KEY,
        seq BIGINT NOT NULL DEFAULT nextval('episode_seq'),
        blueprint_id VARCHAR NOT NULL,
        corpus VARCHAR NOT NULL,
        engine VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        sampling JSON NOT NULL,
        settings JSON NOT NULL,
        snapshot VARCHAR,
        tool_versions JSON NOT NULL,
        reward DOUBLE NOT NULL,
        components JSON NOT NULL,
        span_f1 DOUBLE NOT NULL,
        turns INTEGER NOT NULL,
        calls INTEGER NOT NULL,
        invalid_calls INTEGER NOT NULL,
        end_reason VARCHAR NOT NULL,
        trajectory JSON NOT NULL,
        created_at TIMESTAMP NOT NULL,
        decision VARCHAR
    )
    """,
    "CREATE INDEX episodes_blueprint ON episodes (blueprint_id, engine, model)",
)
