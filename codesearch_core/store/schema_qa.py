"""Schema version 15 (`store.schema` replays it): the QA queue of a built data set (issue 31).

Kept apart from `store.schema` so that neither file grows past what one concern needs; like every
migration it is appended, never edited.
"""

from __future__ import annotations

from typing import Final

V15: Final[tuple[str, ...]] = (
    "CREATE SEQUENCE qa_seq START 1",
    # One item of a data set's QA sample (`codesearch dataset sample DIR --queue`), reviewed in the
    # Review page's QA queue: accept says the item is correct, reject that it is not. `qa_id` is
    # the data set's id and the item's id, so the same item id in two data sets is two QA items.
    # The data set is named by its id (a hash of its data files: the items judged), the folder it
    # was last sampled from and its card's recipe sha256; `item` is the item as sampled, so the
    # card renders without the folder. The queue's cached state is the one every kind has
    # (`schema_queue.item_state_update`).
    """
    CREATE TABLE qa_items (
        qa_id VARCHAR PRIMARY KEY,
        seq BIGINT NOT NULL DEFAULT nextval('qa_seq'),
        dataset_id VARCHAR NOT NULL,
        dataset_name VARCHAR NOT NULL,
        dataset_dir VARCHAR NOT NULL,
        recipe_sha256 VARCHAR NOT NULL,
        item_id VARCHAR NOT NULL,
        stratum VARCHAR NOT NULL,
        item JSON NOT NULL,
        sampled_at TIMESTAMP NOT NULL,
        decision VARCHAR,
        decision_event_id BIGINT,
        n_votes INTEGER DEFAULT 0,
        version BIGINT DEFAULT 0
    )
    """,
    "CREATE INDEX qa_items_dataset ON qa_items (dataset_id, item_id)",
)
