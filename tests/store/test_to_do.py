"""A reviewer's to-do set (`store.to_do`), as the lease and the progress bar read it, against its
definition read plainly from the tables: open, not voted on by the reviewer (skips too), not taken
up by others' votes and live leases."""

from __future__ import annotations

import contextlib
import random
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from codesearch_core.errors import StoreError
from codesearch_core.models import DecisionAction
from codesearch_core.store import EPISODE, Store
from tests.store.test_episodes import episode

REVIEWERS = ("ann", "bob", "cy", "dee")


def _expected(store: Store, reviewer: str, reviews: int) -> tuple[list[str], list[str]]:
    """(to do in queue order, the reviewer's own live leases among them), read plainly."""
    now = datetime.now(UTC).replace(tzinfo=None)  # leases expire in naive UTC

    def read(cur: duckdb.DuckDBPyConnection) -> tuple[list[Any], set[str], list[Any]]:
        items = cur.execute("SELECT episode_id, decision, n_votes FROM episodes ORDER BY seq")
        rows = items.fetchall()
        voted = {r[0] for r in cur.execute(
            "SELECT item_id FROM votes WHERE kind = 'episode' AND reviewer = ?", [reviewer]
        ).fetchall()}  # fmt: skip
        leases = cur.execute(
            "SELECT item_id, reviewer FROM leases WHERE kind = 'episode' AND expires_at > ?",
            [now],
        ).fetchall()
        return rows, voted, leases

    items, voted, leases = store._read(read)  # the tables themselves: in no public view
    held: dict[str, int] = {}
    own = set()
    for item, who in leases:
        if who == reviewer:
            own.add(item)
        else:
            held[item] = held.get(item, 0) + 1
    to_do = [
        i for i, decision, votes in items
        if decision is None and votes < reviews and i not in voted
        and votes + held.get(i, 0) < reviews
    ]  # fmt: skip
    return to_do, [i for i in to_do if i in own]


def test_the_to_do_set_matches_its_definition_with_votes_skips_and_others_leases(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.duckdb"
    rng = random.Random(7)
    with Store(path) as store:
        store.set_review_settings(replace(store.review_settings(), reviews_per_item=2))
        store.episodes.save([episode(pattern=f"p{i}") for i in range(140)])
        ids = [e.episode_id for e in store.episodes.list()]
        # ann voted on (or skipped) the first 70, still open with one vote: the first windows of
        # the queue hold nothing for her.
        for i, item in enumerate(ids[:70]):
            action = DecisionAction.SKIP if i % 10 == 0 else DecisionAction.ACCEPT
            store.queue(EPISODE).decide(item, action, "ann")
        # The others vote, skip and lease at random.
        for _ in range(120):
            who = rng.choice(REVIEWERS[1:])
            item = rng.choice(ids)
            if rng.random() < 0.4:
                store.queue(EPISODE).take_lease(item, who)
            else:
                action = rng.choice([DecisionAction.ACCEPT, DecisionAction.REJECT,
                                     DecisionAction.SKIP])  # fmt: skip
                # A vote on an item settled meanwhile is refused, as it should be.
                with contextlib.suppress(StoreError):
                    store.queue(EPISODE).decide(item, action, who)
        store.queue(EPISODE).take_lease(ids[100], "cy")
        reviews = store.review_settings().reviews_per_item
        for who in REVIEWERS:
            to_do, own = _expected(store, who, reviews)
            done, share = store.queue(EPISODE).progress(who)
            assert share - done == len(to_do), who
        for who in REVIEWERS:
            to_do, own = _expected(store, who, reviews)
            picked = store.queue(EPISODE).lease_next(None, who)
            assert picked == (own[0] if own else to_do[0] if to_do else None), who
