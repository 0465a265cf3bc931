"""A lead's bulk actions over a filter: what they decide and leave out (and why), one batch that
one undo takes back, audited, and nothing written when the count confirmed is no longer true."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from store_helpers import blueprint, executed, proposal, reward, run_failed

from codesearch_core.access import AccessDenied, Actor, Mode, load_settings
from codesearch_core.errors import StoreError
from codesearch_core.models import DecisionAction, Span
from codesearch_core.store import (
    DRAFT,
    DRIFT,
    EPISODE,
    PROPOSAL,
    QA,
    AuditFilters,
    DecisionState,
    DraftFilters,
    DriftFilters,
    DriftItem,
    EpisodeFilters,
    QADataset,
    QAFilters,
    QueueFilters,
    Store,
    StoredEpisode,
    utc_now,
)
from codesearch_core.store.types import StaleDecisionError
from tests.store.test_episodes import episode
from tests.store.test_store_drafts import draft

ACCEPT, REJECT = DecisionAction.ACCEPT, DecisionAction.REJECT
ANY = QueueFilters(decision=DecisionState.ANY)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "studio.duckdb") as s:
        yield s


@pytest.fixture
def items(store: Store) -> dict[str, str]:
    """One item of each kind, by name."""
    bp = blueprint(1)
    store.blueprints.add([bp])
    names = ("perfect", "perfect2", "partial", "failed", "not_run", "conflict", "decided")
    ids = dict(zip(names, store.add_proposals([proposal(bp, n) for n in names]), strict=True))
    executed(store, [ids[n] for n in ("perfect", "perfect2", "conflict", "decided")])
    executed(store, [ids["partial"]], f1=0.5)
    store.record_execution_and_grade(ids["failed"], run_failed(), None, reward(0.0))
    store.set_review_settings(store.review_settings().__class__(reviews_per_item=2))
    store.queue(PROPOSAL).decide(ids["conflict"], ACCEPT, "ann")
    store.queue(PROPOSAL).decide(ids["conflict"], REJECT, "bob")
    store.queue(PROPOSAL).decide(ids["decided"], REJECT, "ann", final=True)
    return ids


def test_a_bulk_accept_takes_only_perfect_runs_and_says_what_it_leaves_out(
    store: Store, items: dict[str, str]
) -> None:
    plan = store.queue(PROPOSAL).bulk_plan(ANY, ACCEPT)
    assert set(plan.item_ids) == {items["perfect"], items["perfect2"]}
    assert plan.left_out == {
        "in conflict": 1, "already decided": 1, "not run yet": 1, "run failed": 1,
        "grade not perfect": 1,
    }  # fmt: skip
    assert plan.summary() == (
        "2 will be accepted; 5 left out: 1 in conflict, 1 already decided, 1 not run yet, "
        "1 run failed, 1 grade not perfect"
    )


def test_an_item_in_drift_is_left_out_of_a_bulk_accept(store: Store, items: dict[str, str]) -> None:
    # Its findings changed on the corpus as it is now: it needs a look, not a bulk accept.
    store.drift.add(
        [DriftItem(items["perfect2"], "proposal", "bp-001", (Span("src/app.py", 1, 1),), (),
                   None, None, None, None, utc_now())]
    )  # fmt: skip
    plan = store.queue(PROPOSAL).bulk_plan(ANY, ACCEPT)
    assert plan.item_ids == (items["perfect"],) and plan.left_out["in drift"] == 1


def test_a_bulk_reject_decides_every_open_item_with_one_reason(
    store: Store, items: dict[str, str]
) -> None:
    plan = store.queue(PROPOSAL).bulk_plan(ANY, REJECT)
    assert len(plan.item_ids) == 5 and plan.left_out == {"in conflict": 1, "already decided": 1}
    batch, done = store.queue(PROPOSAL).bulk_decide(
        ANY, REJECT, "lee", expected=plan, reason="wrong tool"
    )
    assert done.item_ids == plan.item_ids
    for item in plan.item_ids:
        found = store.review_item(item)
        assert found is not None and found.state == "reject"
        assert found.decision is not None
        assert (found.decision.reason, found.decision.batch_id) == ("wrong tool", batch)


def test_one_undo_takes_the_whole_batch_back(store: Store, items: dict[str, str]) -> None:
    store.queue(PROPOSAL).decide(items["partial"], REJECT, "lee")  # before the batch: stays
    plan = store.queue(PROPOSAL).bulk_plan(ANY, ACCEPT)
    batch, _ = store.queue(PROPOSAL).bulk_decide(ANY, ACCEPT, "lee", expected=plan)
    assert store.queue(PROPOSAL).last_undoable_batch("lee") == (batch, 2)
    store.queue(PROPOSAL).undo("lee")
    for item in plan.item_ids:
        found = store.review_item(item)
        assert found is not None and found.state is None
    assert store.queue(PROPOSAL).last_undoable_batch("lee") is None
    assert store.queue(PROPOSAL).last_undoable("lee") == (items["partial"], store.queue(PROPOSAL).history(
        items["partial"])[-1].event_id, "reject")  # fmt: skip
    assert store.check_caches() == []
    actions = [e.action for e in store.audit_log(AuditFilters(action="decision.bulk"))]
    assert actions == ["decision.bulk.undo", "decision.bulk.accept"]


def test_a_count_that_is_no_longer_true_decides_nothing(
    store: Store, items: dict[str, str]
) -> None:
    plan = store.queue(PROPOSAL).bulk_plan(ANY, ACCEPT)
    store.queue(PROPOSAL).decide(
        items["perfect"], REJECT, "lee", final=True
    )  # meanwhile, elsewhere
    with pytest.raises(StaleDecisionError, match="2 then, 1 now"):
        store.queue(PROPOSAL).bulk_decide(ANY, ACCEPT, "lee", expected=plan)
    found = store.review_item(items["perfect2"])
    assert found is not None and found.state is None


def test_a_filter_with_nothing_to_decide_is_refused(store: Store, items: dict[str, str]) -> None:
    only_failed = QueueFilters(decision=DecisionState.ANY, text="failed")
    plan = store.queue(PROPOSAL).bulk_plan(only_failed, ACCEPT)
    assert plan.item_ids == () and plan.left_out == {"run failed": 1}
    with pytest.raises(StoreError, match="nothing to accept: 0 will be accepted; 1 left out"):
        store.queue(PROPOSAL).bulk_decide(only_failed, ACCEPT, "lee", expected=plan)


def test_only_a_lead_decides_in_bulk(store: Store, items: dict[str, str]) -> None:
    settings = load_settings({}, {"auth": "oidc"})
    annotator = store.acting_as(Actor("ann@x", Mode.OIDC))
    annotator.sign_in(settings)
    plan = annotator.queue(PROPOSAL).bulk_plan(ANY, REJECT)
    with pytest.raises(AccessDenied, match="lead"):
        annotator.queue(PROPOSAL).bulk_decide(ANY, REJECT, "ann@x", expected=plan)


# --- the other queues' filters, their bulk actions and leases (issue 39) ---------------------------


def _episode(pattern: str, *, reward: float = 1.0, tools: tuple[str, ...] = ("ripgrep_search",),
             **extra: Any) -> StoredEpisode:  # fmt: skip
    """An episode whose one turn calls `tools`, in that order."""
    base = episode(blueprint_id=extra.pop("blueprint_id", "bp-001"), pattern=pattern, reward=reward)
    turn = [{"name": t, "arguments": {"pattern": pattern}, "observation": ""} for t in tools]
    trajectory = {**base.trajectory, "turns": [turn]}
    return replace(base, trajectory=trajectory, **extra)


@pytest.fixture
def episodes(store: Store) -> dict[str, str]:
    """Reference episodes (two perfect, one on a corpus that is gone, one imperfect that read a
    file) and a model's, by name."""
    store.blueprints.add([blueprint(1), blueprint(2)])
    made = {
        "ref_a": _episode("a"),
        "ref_b": _episode("b", blueprint_id="bp-002"),
        "ref_gone": _episode("c", corpus="a-corpus-that-is-gone"),
        "ref_half": _episode(
            "d", reward=0.5, tools=("ripgrep_search", "read_file"), end_reason="turn_limit"
        ),
        "model": _episode("e", engine="openai", model="m1", tools=("read_file",)),
    }
    assert store.episodes.save(list(made.values())) == len(made)
    return {name: e.episode_id for name, e in made.items()}


def test_episode_filters_find_by_reward_tool_end_source_and_text(
    store: Store, episodes: dict[str, str]
) -> None:
    queue = store.queue(EPISODE)

    def found(**f: Any) -> set[str]:
        plan = queue.bulk_plan(EpisodeFilters(**f), REJECT)
        return {name for name, i in episodes.items() if i in plan.item_ids}

    assert found(max_reward=0.99) == {"ref_half"}
    assert found(tool_used="read_file") == {"ref_half", "model"}
    assert found(tool_used="submit") == set()
    assert found(engine="reference", min_reward=1.0) == {"ref_a", "ref_b", "ref_gone"}
    assert found(model="m1") == {"model"} and found(end_reason="turn_limit") == {"ref_half"}
    assert found(corpus="a-corpus-that-is-gone") == {"ref_gone"}
    # The blueprint's id or its intent, whatever the case.
    assert found(text="BP-002") == {"ref_b"}
    assert found(text="CALLS TO HANDLER_2") == {"ref_b"}
    assert found(blueprint_id="bp-001", engine="openai") == {"model"}
    queue.decide(episodes["ref_a"], ACCEPT, "ann")
    assert "ref_a" not in found(engine="reference")  # open items unless the state says
    accepted = queue.bulk_plan(EpisodeFilters(decision=DecisionState.ACCEPTED), REJECT)
    assert accepted.item_ids == () and accepted.left_out == {"already decided": 1}


def test_a_bulk_accept_of_reference_episodes_leaves_out_what_cannot_be_accepted(
    store: Store, episodes: dict[str, str]
) -> None:
    queue = store.queue(EPISODE)
    queue.decide(episodes["ref_b"], REJECT, "ann")
    verified = EpisodeFilters(engine="reference", min_reward=1.0, decision=DecisionState.ANY)
    plan = queue.bulk_plan(verified, ACCEPT)
    assert plan.item_ids == (episodes["ref_a"],)
    assert plan.left_out == {"already decided": 1, "corpus gone": 1}
    batch, done = queue.bulk_decide(verified, ACCEPT, "lee", expected=plan, reason="verified")
    assert done.item_ids == plan.item_ids and queue.counts()["accept"] == 1
    (entry,) = store.audit_log(AuditFilters(action="episode.bulk.accept"))
    assert entry.target == batch and entry.detail["filters"] == verified.to_dict()
    assert entry.detail["left_out"] == {"already decided": 1, "corpus gone": 1}
    queue.undo("lee")
    assert queue.counts()["accept"] == 0 and store.check_caches() == []


def test_a_filtered_lease_draws_only_the_filters_items(
    store: Store, episodes: dict[str, str]
) -> None:
    queue = store.queue(EPISODE)
    readers = EpisodeFilters(tool_used="read_file")
    assert queue.lease_next(readers, "ann") == episodes["ref_half"]
    assert queue.lease_next(readers, "bob") == episodes["model"]  # ann holds the first
    assert queue.lease_next(readers, "cy") is None
    assert queue.lease_next(None, "cy") == episodes["ref_a"]  # unfiltered: the queue's order


def test_a_queue_refuses_another_kinds_filters(store: Store, episodes: dict[str, str]) -> None:
    with pytest.raises(
        StoreError, match="the episode queue takes EpisodeFilters, not QueueFilters"
    ):
        store.queue(EPISODE).bulk_plan(ANY, ACCEPT)
    with pytest.raises(StoreError, match="takes EpisodeFilters"):
        store.queue(EPISODE).lease_next(QAFilters(rule="call"), "ann")


def test_qa_filters_and_a_bulk_reject_over_a_rule(store: Store) -> None:
    dataset = QADataset("d1", "small", "/data/ds", "f00d")
    sample = [
        ("s", {"id": "1", "rule": "call", "source": "synthesis", "split": "train",
               "intent": "Find every call to open"}),
        ("s", {"id": "2", "rule": "call", "source": "seed", "split": "eval",
               "intent": "Find every call to close"}),
        ("s", {"id": "3", "rule": "import", "source": "synthesis", "split": "train",
               "intent": "Find the imports of os"}),
    ]  # fmt: skip
    store.qa.import_sample(dataset, sample)
    queue = store.queue(QA)

    def found(**f: Any) -> list[str]:
        return [i.rsplit(".", 1)[1] for i in queue.bulk_plan(QAFilters(**f), REJECT).item_ids]

    assert found(rule="call") == ["1", "2"] and found(source="seed") == ["2"]
    assert found(split="train") == ["1", "3"] and found(text="IMPORTS") == ["3"]
    assert found(dataset="small", rule="call", split="eval") == ["2"] and found(dataset="x") == []
    plan = queue.bulk_plan(QAFilters(rule="call"), REJECT)
    queue.bulk_decide(QAFilters(rule="call"), REJECT, "lee", expected=plan, reason="wrong rule")
    assert queue.counts() == {"open": 1, "accept": 0, "reject": 2, "conflict": 0}


def test_draft_filters_and_a_bulk_accept_that_undo_takes_back(store: Store) -> None:
    for d in (draft(0), draft(1, language="go", rule="import"), draft(2)):
        store.drafts.add(d)
    queue = store.queue(DRAFT)
    calls = DraftFilters(rule="call", language="python")
    plan = queue.bulk_plan(calls, ACCEPT)
    assert plan.item_ids == (draft(0).id, draft(2).id)
    assert queue.bulk_plan(DraftFilters(text="HANDLER_1"), ACCEPT).item_ids == (draft(1).id,)
    queue.bulk_decide(calls, ACCEPT, "lee", expected=plan)
    # An accepted draft becomes a blueprint; the batch's undo takes both back.
    made = [store.drafts.get(d.id) for d in (draft(0), draft(2))]
    assert all(d is not None and d.blueprint_id for d in made)
    made_ids = [d.blueprint_id for d in made if d is not None and d.blueprint_id]
    assert all(store.blueprints.get(b) is not None for b in made_ids)
    queue.undo("lee")
    assert all(store.blueprints.get(b) is None for b in made_ids)
    assert queue.counts()["open"] == 3


def test_drift_filters_by_what_drifted_and_its_blueprint(store: Store) -> None:
    bp = blueprint(1)
    store.blueprints.add([bp])
    ids = store.add_proposals([proposal(bp, "a"), proposal(bp, "b")])
    spans = (Span("src/app.py", 1, 1),)
    store.drift.add(
        [DriftItem(pid, "proposal", bp.id, spans, (), None, None, None, None, utc_now())
         for pid in ids]
    )  # fmt: skip
    queue = store.queue(DRIFT)
    assert queue.bulk_plan(DriftFilters(drifted="proposal"), REJECT).item_ids == tuple(ids)
    assert queue.bulk_plan(DriftFilters(drifted="reference"), REJECT).item_ids == ()
    assert queue.bulk_plan(DriftFilters(text=bp.id.upper()), REJECT).item_ids == tuple(ids)
