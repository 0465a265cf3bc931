"""Schema versions 10 and 11 (`store.schema` replays them): the held-out split and eval runs
(issue 18).

Kept apart from `store.schema` so that neither file grows past what one concern needs; like every
migration it is appended, never edited.
"""

from __future__ import annotations

from typing import Final

V10: Final[tuple[str, ...]] = (
    # A blueprint marked `split = 'eval'` is left out of every export unless asked, so a model is
    # not scored on what it was trained on.
    "ALTER TABLE blueprints ADD COLUMN split VARCHAR DEFAULT 'train'",
    # An eval run (`codesearch eval`): one row here (its summary, overall and per category) and
    # one row per blueprint in `eval_items`, whose `answers` hold each answer's text, call, grade
    # and findings, so any answer can be opened in the review card's diff view later without
    # running anything again.
    """
    CREATE TABLE eval_runs (
        run_id VARCHAR PRIMARY KEY,
        engine VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        n INTEGER NOT NULL,
        blueprints VARCHAR NOT NULL,
        created_at TIMESTAMP NOT NULL,
        created_by VARCHAR NOT NULL,
        summary JSON NOT NULL
    )
    """,
    """
    CREATE TABLE eval_items (
        run_id VARCHAR NOT NULL,
        blueprint_id VARCHAR NOT NULL,
        position INTEGER NOT NULL,
        corpus VARCHAR NOT NULL,
        language VARCHAR NOT NULL,
        tags VARCHAR[] NOT NULL,
        reference_tool VARCHAR NOT NULL,
        best_reward DOUBLE NOT NULL,
        answers JSON NOT NULL,
        PRIMARY KEY (run_id, blueprint_id)
    )
    """,
)

V11: Final[tuple[str, ...]] = (
    # Each eval item keeps the blueprint as it was graded against (its JSONL object): the diff
    # view shows an answer against the expected spans that gave its reward, even after the
    # blueprint was edited, and a run over a blueprints file not in the store can be opened too.
    # Items stored before have none: they are shown against the blueprint in the store.
    "ALTER TABLE eval_items ADD COLUMN blueprint JSON",
)
