"""Schema version 14 (`store.schema` replays it): annotation guidelines and batches of decisions
(issue 29, "what reviewers expect from the tools they already use").

Kept apart from `store.schema` so that neither file grows past what one concern needs; like every
migration it is appended, never edited.
"""

from __future__ import annotations

from typing import Final

V14: Final[tuple[str, ...]] = (
    # The project's annotation guidelines (Markdown), one row per saved version: a save never
    # replaces the text reviewers decided under. The newest version is the one in force.
    """
    CREATE TABLE guidelines (
        version INTEGER PRIMARY KEY,
        text VARCHAR NOT NULL,
        author VARCHAR NOT NULL,
        saved_at TIMESTAMP NOT NULL
    )
    """,
    # The guideline version in force when a decision was recorded (NULL: none had been written,
    # or the decision predates v14), and the batch a lead's bulk action recorded it in (one undo
    # takes the whole batch back). IF NOT EXISTS: DuckDB cannot drop a column of a table a view
    # reads, so a store taken back to an older version by hand keeps them, and replays this.
    "ALTER TABLE decisions ADD COLUMN IF NOT EXISTS guideline_version INTEGER",
    "ALTER TABLE decisions ADD COLUMN IF NOT EXISTS batch_id VARCHAR",
)
