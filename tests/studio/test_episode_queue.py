"""The Episodes queue's card over a real store: each reviewer's vote (an undo takes it back, a
second decision replaces the first), the state the reviews settle, and the lease order."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from codesearch_core import studio
from codesearch_core.engines import MutationEngine, OpenAIEngine, OpenAISettings
from codesearch_core.errors import EngineError, InputFileError
from codesearch_core.gym import ReferencePolicy
from codesearch_core.models import DecisionAction
from codesearch_core.store import EPISODE, ReviewSettings, Store, StoredEpisode


def _episode(pattern: str) -> StoredEpisode:
    call = {"name": "ripgrep_search", "arguments": {"pattern": pattern}, "observation": ""}
    return StoredEpisode(
        blueprint_id="bp-1", corpus="webshop", engine="reference", model="reference", reward=1.0,
        components={}, span_f1=1.0, turns=2, calls=1, invalid_calls=0, end_reason="submitted",
        trajectory={"blueprint_id": "bp-1", "turns": [[call]], "submit": []},
    )  # fmt: skip


def test_votes_per_reviewer_conflict_and_undo(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        store.set_review_settings(ReviewSettings(reviews_per_item=2))
        store.episodes.save([_episode("a"), _episode("b")])
        first = studio.next_item_of(store, EPISODE, "ann")
        assert first == store.episodes.list()[0].episode_id
        # Leased to ann and needing two reviews: bea is shown it too, cid is not (two leases).
        assert studio.next_item_of(store, EPISODE, "bea") == first
        assert studio.next_item_of(store, EPISODE, "cid") != first

        store.queue(EPISODE).decide(first, DecisionAction.REJECT, "ann")
        store.queue(EPISODE).decide(first, DecisionAction.ACCEPT, "ann")  # replaces
        store.queue(EPISODE).decide(first, DecisionAction.REJECT, "bea")
        card = studio.episode_card(store, first)
        assert card is not None
        assert {r: a for r, (a, _) in card.votes.items()} == {"ann": "accept", "bea": "reject"}
        assert card.state == "conflict" and not studio.still_to_do(card, "cid")

        store.queue(EPISODE).undo("bea")
        card = studio.episode_card(store, first)
        assert card is not None and card.state is None
        assert {r: a for r, (a, _) in card.votes.items()} == {"ann": "accept"}
        assert studio.still_to_do(card, "bea")
        assert not studio.still_to_do(card, "ann")
        assert studio.episode_card(store, "no-such-episode") is None


def test_the_rollout_policy_is_the_reference_or_a_reachable_chat_model() -> None:
    assert isinstance(studio.rollout_policy(None, None), ReferencePolicy)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    down = OpenAIEngine(OpenAISettings(base_urls=(f"http://127.0.0.1:{port}/v1",), model="m"))
    with pytest.raises(EngineError, match="cannot reach"):
        studio.rollout_policy(down, None)  # before any episode, not as episodes scoring 0
    with pytest.raises(InputFileError, match="not by mutations"):
        studio.rollout_policy(MutationEngine(), None)
