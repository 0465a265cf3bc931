"""Step labels (schema v16): a reviewer's label per call of an episode, kept as events like
decisions (a new label supersedes theirs, undo walks back), audited and role-checked; and a
corrected episode stored beside its original. Real DuckDB; the episodes are stored records (the
gym's re-run of a corrected step is tests/gym/test_correct.py's)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest

from codesearch_core.access import AccessDenied, Actor, Mode, load_settings
from codesearch_core.errors import StoreError
from codesearch_core.store import AuditFilters, Store, StoredEpisode
from codesearch_core.store.schema import SCHEMA_VERSION, apply_migrations

SETTINGS = load_settings({}, {"auth": "oidc", "admins": ["root@x"]})


def _call(pattern: str) -> dict[str, object]:
    return {"name": "ripgrep_search", "arguments": {"pattern": pattern}, "observation": "none"}


def four_turns(pattern: str = "a") -> StoredEpisode:
    """A stored 4-turn episode: two calls in turn 2, a submit in turn 4."""
    turns = [[_call(pattern)], [_call("b"), _call("c")], [_call("d")],
             [{"name": "submit", "arguments": {"locations": []}, "observation": "submitted"}]]  # fmt: skip
    return StoredEpisode(
        blueprint_id="bp-1", corpus="webshop", engine="reference", model="m", reward=0.5,
        components={}, span_f1=0.5, turns=4, calls=4, invalid_calls=0, end_reason="submitted",
        trajectory={"blueprint_id": "bp-1", "turns": turns},
    )  # fmt: skip


@pytest.fixture
def stored(tmp_path: Path) -> Iterator[tuple[Store, str]]:
    with Store(tmp_path / "s.duckdb") as store:
        store.episodes.save([four_turns()])
        yield store, four_turns().episode_id


def _counts(
    store: Store, episode_id: str
) -> dict[tuple[int, int], tuple[dict[str, int], str | None]]:
    return {(s.turn, s.call): (dict(s.counts), s.majority) for s in store.steps.summary(episode_id)}


def test_a_new_label_supersedes_the_reviewers_own_and_the_summary_counts_reviewers(
    stored: tuple[Store, str],
) -> None:
    store, ep = stored
    store.steps.label(ep, 1, 1, "useful", "ann")
    store.steps.label(ep, 1, 1, "Wrong", "ann", note="searches everything")  # supersedes
    store.steps.label(ep, 1, 1, "wrong", "bob")
    store.steps.label(ep, 2, 2, "redundant", "bob")
    store.steps.label(ep, 2, 1, "useful", "ann")
    store.steps.label(ep, 2, 1, "redundant", "bob")
    labels = store.steps.labels(ep)
    assert [(x.turn, x.call, x.reviewer, x.label) for x in labels] == [
        (1, 1, "ann", "wrong"), (1, 1, "bob", "wrong"), (2, 1, "ann", "useful"),
        (2, 1, "bob", "redundant"), (2, 2, "bob", "redundant"),
    ]  # fmt: skip
    assert labels[0].note == "searches everything"
    assert _counts(store, ep) == {
        (1, 1): ({"wrong": 2}, "wrong"),
        (2, 1): ({"useful": 1, "redundant": 1}, None),  # a tie has no majority
        (2, 2): ({"redundant": 1}, "redundant"),
    }
    # Append-only: every label is still in the table.
    rows = store._read(lambda cur: cur.execute("SELECT count(*) FROM step_labels").fetchall())
    assert rows == [(6,)]


def test_undo_walks_back_through_the_reviewers_labels_only(stored: tuple[Store, str]) -> None:
    store, ep = stored
    store.steps.label(ep, 3, 1, "useful", "ann")
    store.steps.label(ep, 3, 1, "wrong", "ann")
    store.steps.label(ep, 1, 1, "wrong", "bob")
    undone = store.steps.undo("ann")
    assert (undone.turn, undone.call, undone.label) == (3, 1, "wrong")
    assert _counts(store, ep)[(3, 1)] == ({"useful": 1}, "useful")  # the earlier label stands
    assert store.steps.undo("ann", ep).label == "useful"
    assert (3, 1) not in _counts(store, ep)
    with pytest.raises(StoreError, match=r"ann has no step label .* to undo"):
        store.steps.undo("ann", ep)
    assert _counts(store, ep) == {(1, 1): ({"wrong": 1}, "wrong")}  # bob's is untouched


@pytest.mark.parametrize(
    ("turn", "call", "label", "error"),
    [
        (5, 1, "useful", "has turns 1 to 4, not 5"),
        (2, 3, "useful", "turn 2 of episode .* has calls 1 to 2, not 3"),
        (0, 1, "useful", "not 0"),
        (1, 1, "great", "unknown step label 'great': use one of useful, redundant, wrong"),
    ],
)
def test_a_label_of_no_call_or_an_unknown_label_is_refused_and_nothing_is_written(
    stored: tuple[Store, str], turn: int, call: int, label: str, error: str
) -> None:
    store, ep = stored
    with pytest.raises(StoreError, match=error):
        store.steps.label(ep, turn, call, label, "ann")
    with pytest.raises(StoreError, match="no stored episode 'nope'"):
        store.steps.label("nope", 1, 1, "useful", "ann")
    assert store.steps.labels(ep) == []


def test_labels_are_audited_and_someone_logged_in_labels_only_as_themselves(
    stored: tuple[Store, str],
) -> None:
    store, ep = stored
    ann = store.acting_as(Actor("ann@x", Mode.OIDC))
    ann.sign_in(SETTINGS)
    event = ann.steps.label(ep, 2, 2, "redundant", "ann@x", note="same as call 1")
    with pytest.raises(AccessDenied, match="only as themselves"):
        ann.steps.label(ep, 2, 2, "wrong", "bob@x")
    ann.steps.undo("ann@x")
    trail = store.audit_log(AuditFilters(action="step"))
    assert [(a.action, a.actor, a.target) for a in trail] == [
        ("step.undo", "ann@x", ep),
        ("step.label", "ann@x", ep),
    ]
    assert trail[1].detail["event"] == event and trail[1].detail["label"] == "redundant"
    assert (trail[1].detail["turn"], trail[1].detail["call"]) == (2, 2)


def test_a_correction_is_stored_beside_its_original_and_linked(stored: tuple[Store, str]) -> None:
    store, ep = stored
    fixed = replace(four_turns("z"), engine="correction", corrected_from=ep, corrected_turn=1)
    assert store.steps.save_correction(fixed) is True
    assert store.steps.save_correction(fixed) is False  # the same correction twice: stored once
    got = store.episodes.get(fixed.episode_id)
    assert got is not None and (got.corrected_from, got.corrected_turn) == (ep, 1)
    original = store.episodes.get(ep)
    assert original is not None and original.corrected_from is None
    assert [e.episode_id for e in store.steps.corrections()] == [fixed.episode_id]
    with pytest.raises(StoreError, match="names the episode and the turn"):
        store.steps.save_correction(four_turns("y"))
    with pytest.raises(StoreError, match="no stored episode 'gone'"):
        store.steps.save_correction(replace(fixed, corrected_from="gone"))
    assert store.audit_log(AuditFilters(action="episode.correct"))[0].target == fixed.episode_id


def test_a_v15_store_opens_and_gains_the_step_labels_and_the_link(tmp_path: Path) -> None:
    path = tmp_path / "v15.duckdb"
    conn = duckdb.connect(str(path))
    apply_migrations(conn, current=0, upto=15)
    conn.close()
    with Store(path) as store:
        assert (store.found_version, store.schema_version) == (15, SCHEMA_VERSION)
        assert store.episodes.save([four_turns()]) == 1
        ep = four_turns().episode_id
        assert store.episodes.get(ep).corrected_from is None  # type: ignore[union-attr]
        store.steps.label(ep, 4, 1, "useful", "ann")
        assert _counts(store, ep) == {(4, 1): ({"useful": 1}, "useful")}
