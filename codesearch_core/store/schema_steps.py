"""Schema version 16 (`store.schema` replays it): a label per call of an episode, and a corrected
episode's link to the one it corrects (issue 39, item 2).

Kept apart from `store.schema` so that neither file grows past what one concern needs; like every
migration it is appended, never edited.
"""

from __future__ import annotations

from typing import Final

V16: Final[tuple[str, ...]] = (
    "CREATE SEQUENCE step_label_seq START 1",
    # A reviewer's label of one call of a stored episode (`store.step_labels`): an append-only
    # event log like `decisions`. `turn` and `call` count from 1, as the trajectory view shows
    # them. A reviewer's label of a call is their latest event on it that no undo names; an
    # `undo` event names the event it cancels in `undoes` (UNIQUE: two undos at once cannot both
    # cancel one event), and then `turn`, `call` and `label` repeat the cancelled event's.
    """
    CREATE TABLE step_labels (
        event_id BIGINT PRIMARY KEY DEFAULT nextval('step_label_seq'),
        episode_id VARCHAR NOT NULL,
        turn INTEGER NOT NULL,
        call INTEGER NOT NULL,
        label VARCHAR NOT NULL,
        reviewer VARCHAR NOT NULL,
        note VARCHAR NOT NULL DEFAULT '',
        ts TIMESTAMP NOT NULL,
        undoes BIGINT UNIQUE
    )
    """,
    "CREATE INDEX step_labels_episode ON step_labels (episode_id, reviewer)",
    # A corrected episode (`gym.correct`): the episode it was made from and the turn whose calls a
    # reviewer edited. NULL for an episode a policy played.
    "ALTER TABLE episodes ADD COLUMN corrected_from VARCHAR",
    "ALTER TABLE episodes ADD COLUMN corrected_turn INTEGER",
)
