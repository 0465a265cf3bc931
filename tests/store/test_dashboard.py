"""The Overview's figures (issue 39: they counted proposals only): every queue's reviewers and
agreement in `dashboard_stats`, with the proposals' chart counting the proposals' events only; and
one queue's figures for the queue selector (`store.queue(kind).stats()`): its items by state, its
own decision events, its agreement and reviewers, the QA queue by data set."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesearch_core.store import (
    DRAFT,
    EPISODE,
    PROPOSAL,
    QA,
    QADataset,
    QueueGroup,
    ReviewSettings,
    Store,
)
from tests.store.test_episodes import episode
from tests.store_helpers import blueprint, proposal

SMALL = QADataset("d5e7", "small", "/data/ds", "f00d")
OTHER = QADataset("a1b2", "other", "/data/other", "beef")


def _sample(dataset: QADataset, *ids: str) -> list[tuple[str, dict[str, object]]]:
    return [("all", {"id": i, "intent": f"Find {i} in {dataset.name}"}) for i in ids]


def test_a_queues_figures_are_its_own_votes_states_and_agreement(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        store.episodes.save([episode(pattern=p) for p in "abcd"])
        bp = blueprint(0)
        store.blueprints.add([bp])
        (pid,) = store.add_proposals([proposal(bp, "a")])
        store.queue(PROPOSAL).decide(pid, "reject", "ann")  # another queue's vote: not counted
        store.set_review_settings(ReviewSettings(reviews_per_item=2))
        ids = [e.episode_id for e in store.episodes.list()]
        votes = [("accept", "accept"), ("accept", "reject"), ("reject", "reject")]
        for item, (ann, bob) in zip(ids, votes, strict=False):
            store.queue(EPISODE).decide(item, ann, "ann")
            store.queue(EPISODE).decide(item, bob, "bob")
        store.queue(EPISODE).decide(ids[3], "skip", "carl")
        store.queue(EPISODE).decide(ids[3], "accept", "dan")
        store.queue(EPISODE).undo("dan")
        stats = store.queue(EPISODE).stats()
        dashboard = store.dashboard_stats()
    assert stats.kind == EPISODE
    assert (stats.items, stats.open, stats.accepted, stats.rejected, stats.conflicts) == (
        4, 1, 1, 1, 1)  # fmt: skip
    assert stats.settled == 2
    # Every event of this queue, the undo and the undone accept too; the proposal's reject is not.
    events = {a: sum(n for _, act, n in stats.decisions_per_day if act == a)
              for a in ("accept", "reject", "skip", "undo")}  # fmt: skip
    assert events == {"accept": 4, "reject": 3, "skip": 1, "undo": 1}
    assert stats.reviewers == (("ann", 2, 1, 0), ("bob", 1, 2, 0), ("carl", 0, 0, 1))
    assert stats.agreement.items == 3 and stats.agreement.conflicts == 1
    assert stats.agreement.percent == pytest.approx(2 / 3)
    assert stats.agreement.alpha is not None
    assert stats.groups == ()  # episodes are not broken down
    # The dashboard: every queue's reviewers and agreement; the proposals' own figures and chart
    # count the proposals' votes and events only (the chart opens the proposals' queue).
    assert dashboard.reviewers == (("ann", 0, 1, 0),)
    assert [(a, n) for _, a, n in dashboard.decisions_per_day] == [("reject", 1)]
    assert dashboard.reviewers_by_queue == (
        ("ann", "episode", 2, 1, 0), ("ann", "proposal", 0, 1, 0), ("bob", "episode", 1, 2, 0),
        ("carl", "episode", 0, 0, 1),
    )  # fmt: skip
    by_queue = dict(dashboard.agreement_by_queue)
    assert by_queue["episode"] == stats.agreement and by_queue["proposal"].items == 0
    assert dashboard.to_dict()["reviewers_by_queue"][0]["queue"] == "episode"


def test_the_qa_queue_is_broken_down_by_data_set(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        store.qa.import_sample(SMALL, _sample(SMALL, "a", "b", "c", "d"))
        store.qa.import_sample(OTHER, _sample(OTHER, "a", "b"))
        for qa_id, action in (("d5e7.a", "accept"), ("d5e7.b", "reject"), ("d5e7.c", "accept"),
                              ("a1b2.a", "reject")):  # fmt: skip
            store.queue(QA).decide(qa_id, action, "ann")
        stats = store.queue(QA).stats()
    assert stats.groups == (
        QueueGroup("d5e7", "small", items=4, open=1, accepted=2, rejected=1, conflicts=0),
        QueueGroup("a1b2", "other", items=2, open=1, accepted=0, rejected=1, conflicts=0),
    )
    assert (stats.items, stats.open, stats.accepted, stats.rejected) == (6, 2, 2, 2)
    assert stats.reviewers == (("ann", 2, 2, 0),)
    assert stats.agreement.items == 0 and stats.agreement.percent is None


def test_an_empty_queue_has_no_figures(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        stats = store.queue(DRAFT).stats()
    assert (stats.items, stats.settled, stats.decisions_per_day, stats.reviewers) == (0, 0, (), ())
    assert stats.agreement.items == 0 and stats.agreement.alpha is None
