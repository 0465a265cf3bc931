"""The episodes table (schema v12): stored once by their calls, read back whole; an older store
opens and gains the table."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import duckdb
import pytest

from codesearch_core.errors import StoreError
from codesearch_core.models import DecisionAction
from codesearch_core.store import EPISODE, Store, StoredEpisode
from codesearch_core.store.schema import SCHEMA_VERSION, apply_migrations


def episode(blueprint_id: str = "bp-1", pattern: str = "x", reward: float = 1.0) -> StoredEpisode:
    call = {
        "name": "ripgrep_search",
        "arguments": {"pattern": pattern},
        "observation": "no matches",
    }
    return StoredEpisode(
        blueprint_id=blueprint_id, corpus="webshop", engine="reference", model="reference",
        reward=reward, components={"R_find": reward}, span_f1=reward, turns=2, calls=1,
        invalid_calls=0, end_reason="submitted",
        trajectory={"blueprint_id": blueprint_id, "turns": [[call]], "submit": []},
        tool_versions={"rg": "15"},
    )  # fmt: skip


def test_an_episode_is_stored_once_by_its_calls_and_read_back(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        assert store.episodes.save([episode(), episode(reward=0.5), episode(pattern="y")]) == 2
        assert store.episodes.save([episode()]) == 0
        got = store.episodes.list()
        assert [e.trajectory["turns"][0][0]["arguments"]["pattern"] for e in got] == ["x", "y"]
        assert got[0].components == {"R_find": 1.0} and got[0].tool_versions == {"rg": "15"}
        assert got[0].created_at is not None and got[0].decision is None
        assert store.episodes.blueprints("reference", "reference") == {"bp-1"}
        assert store.episodes.blueprints("openai", "m") == set()
        assert store.counts().episodes == 2


def test_a_v11_store_opens_and_gains_the_episodes_table(tmp_path: Path) -> None:
    path = tmp_path / "v11.duckdb"
    conn = duckdb.connect(str(path))
    apply_migrations(conn, current=0, upto=11)
    conn.close()
    with Store(path) as store:
        assert (store.found_version, store.schema_version) == (11, SCHEMA_VERSION)
        assert store.episodes.list() == [] and store.counts().episodes == 0
        assert store.episodes.save([episode()]) == 1


def test_episode_counts_and_the_accept_blocker_of_a_gone_corpus(tmp_path: Path) -> None:
    gone = replace(episode(pattern="g"), corpus="deleted-corpus")
    with Store(tmp_path / "s.duckdb") as store:
        store.episodes.save([episode(), episode(pattern="y"), gone])
        ok, other = (e.episode_id for e in store.episodes.list()[:2])
        store.queue(EPISODE).decide(ok, DecisionAction.ACCEPT, "ann")
        store.queue(EPISODE).decide(other, DecisionAction.REJECT, "ann")
        assert store.queue(EPISODE).counts() == {"open": 1, "accept": 1, "reject": 1, "conflict": 0}
        assert store.queue(EPISODE).accept_blocker(ok) is None
        why = store.queue(EPISODE).accept_blocker(gone.episode_id)
        assert why is not None and "'deleted-corpus'" in why and "is gone" in why
        # What the card says is what the store refuses with.
        with pytest.raises(StoreError, match="is gone"):
            store.queue(EPISODE).decide(gone.episode_id, DecisionAction.ACCEPT, "ann")
