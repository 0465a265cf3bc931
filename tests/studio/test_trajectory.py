"""The trajectory view's model on real episodes: calls played in the real gym (real rg and
ast-grep on the shipped corpora), laid out turn by turn with each search's shown findings and each
read against the expected spans, refusals, the submit diffed and the reward's components; paging,
a cut observation, a corpus that is gone and a trajectory that cannot be read."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from codesearch_core import studio
from codesearch_core.corpora import corpus_root, load_seed_blueprints
from codesearch_core.gym import (
    AGENT_ENGINE_PREFIX,
    Episode,
    GymSettings,
    ReferencePolicy,
    RewardWeights,
    Task,
    evaluate_agent,
)
from codesearch_core.models import Blueprint
from codesearch_core.store import Store, StoredEpisode
from codesearch_core.studio import FindingStatus


def _seed() -> Blueprint:
    return next(b for b in load_seed_blueprints() if b.plan is None and len(b.expected) >= 2)


def _played(bp: Blueprint) -> dict[str, Any]:
    """Turn 1: the reference search, a read of the first expected span, an unknown tool; turn 2:
    the submit of one expected span of the two."""
    episode = Episode(bp, corpus_root(bp.corpus))
    first = bp.expected[0]
    episode.step(
        [
            {"name": bp.reference_call.name.value, "arguments": bp.reference_call.arguments},
            {
                "name": "read_file",
                "arguments": {
                    "path": first.path,
                    "start_line": first.start_line,
                    "end_line": first.end_line + 3,
                },
            },
            {"name": "grep_everything", "arguments": {}},
        ]
    )
    episode.step([{"name": "submit", "arguments": {"locations": [first.to_dict()]}}])
    return episode.result().to_dict()


def test_each_call_is_laid_out_with_its_findings_read_and_refusal_then_the_submit_diffed() -> None:
    bp = _seed()
    view = studio.trajectory_view(_played(bp), bp, corpus=bp.corpus)
    assert not view.problem and not view.corpus_problem
    assert [t.number for t in view.turns] == [1, 2] and view.pages == 1
    search, read, unknown = view.turns[0].calls
    # The reference search: every expected span among the matches it showed is a hit.
    assert search.kind == "search" and not search.error
    assert search.count(FindingStatus.HIT) == len(set(bp.expected))
    assert search.shown_matches == min(search.matches, 20)
    assert json.loads(search.arguments) == bp.reference_call.arguments
    # The read shows the first expected span.
    assert read.kind == "read" and read.read is not None
    assert read.read.covers[0] == bp.expected[0]
    # The unknown tool is refused, and the refusal says so.
    assert unknown.kind == "other" and unknown.error and "error" in unknown.observation
    assert view.invalid_calls == 1
    # One expected span of two submitted: a hit and a miss, rewarded below 1.
    assert view.submitted is not None
    statuses = sorted(r.status.value for r in view.submitted)
    assert statuses.count("hit") == 1 and "miss" in statuses
    assert view.found_expected == 1 and view.expected == len(bp.expected)
    assert set(view.components) >= {"R_submit", "R_find", "R_scope", "R_turns", "R_calls"}
    assert 0 < view.reward < 1 and view.end_reason == "submitted"
    assert set(view.components) <= set(studio.COMPONENT_WORDS)


def test_a_50_turn_episode_is_paged_ten_turns_a_page() -> None:
    bp = _seed()
    call = {"name": "read_file", "arguments": {"path": "none.txt"}, "observation": "error",
            "error": "file_not_found"}  # fmt: skip
    trajectory = {"blueprint_id": bp.id, "turns": [[call]] * 50, "info": {"reward": 0.0}}
    view = studio.trajectory_view(trajectory, bp, corpus=bp.corpus)
    assert view.pages == 5 and len(view.turns) == 50
    assert [t.number for t in view.page(2)] == list(range(11, 21))
    assert [t.number for t in view.page(9)] == list(range(41, 51))  # past the end: the last
    assert view.submitted is None and view.calls == 50


def test_an_observation_of_10_mb_is_cut_in_the_view_and_says_so() -> None:
    bp = _seed()
    line = f"{bp.expected[0].path}:{bp.expected[0].start_line}: x\n"
    huge = line * (10_000_000 // len(line))
    trajectory = {"blueprint_id": bp.id, "turns": [[{
        "name": "ripgrep_search", "arguments": {"pattern": "x"}, "observation": huge,
        "error": "", "findings": 10_000_000 // len(line)}]]}  # fmt: skip
    (call,) = studio.trajectory_view(trajectory, bp, corpus=bp.corpus).turns[0].calls
    assert call.observation_cut and call.observation_chars == len(huge)
    assert len(call.observation) == studio.OBSERVATION_VIEW_CHARS
    assert call.count(FindingStatus.HIT) == 1  # the diff is of what is shown
    assert call.shown_matches < call.matches


def test_an_episode_whose_corpus_is_gone_says_why_and_still_lists_its_calls() -> None:
    bp = _seed()
    view = studio.trajectory_view(_played(bp), bp, corpus="deleted-corpus")
    assert "unknown corpus 'deleted-corpus'" in view.corpus_problem
    assert len(view.turns) == 2 and view.submitted is not None


def test_a_trajectory_that_cannot_be_read_is_a_problem_not_an_exception() -> None:
    bp = _seed()
    view = studio.trajectory_view({"turns": 7}, bp, corpus=bp.corpus, blueprint_id=bp.id)
    assert view.problem.startswith("the trajectory cannot be read")
    assert view.turns == () and view.blueprint_id == bp.id


def test_a_stored_episode_and_an_agent_runs_answer_give_the_same_view(tmp_path: Path) -> None:
    bp = _seed()
    run = evaluate_agent(ReferencePolicy(), [Task(bp, corpus_root(bp.corpus))], label="one")
    assert run.engine.startswith(AGENT_ENGINE_PREFIX)
    (item,) = run.items
    from_run = studio.answer_trajectory(run, item, item.answers[0], bp)
    assert from_run is not None and from_run.reward == 1.0
    assert from_run.found_expected == len(set(bp.expected))
    trajectory = json.loads(item.answers[0].raw_text)
    stored = StoredEpisode(bp.id, bp.corpus, "reference", "", 1.0, trajectory["info"]["components"],
                           1.0, 1, 1, 0, "submitted", trajectory)  # fmt: skip
    from_store = studio.episode_trajectory(stored, bp)
    assert from_store.turns == from_run.turns and from_store.submitted == from_run.submitted
    # A single-call run's answer is not an episode.
    assert (
        studio.answer_trajectory(replace(run, engine="mutations"), item, item.answers[0], bp)
        is None
    )


def test_two_runs_side_by_side_say_who_found_what_in_how_many_turns_and_calls(
    tmp_path: Path,
) -> None:
    bp = _seed()
    task = Task(bp, corpus_root(bp.corpus))
    good = evaluate_agent(ReferencePolicy(), [task], label="one")
    half = _played(bp)
    (item,) = good.items
    answer = replace(item.answers[0], raw_text=json.dumps(half), reward=half["info"]["reward"],
                     findings=item.answers[0].findings[:1])  # fmt: skip
    worse = replace(good, run_id="worse", created_at="2026-01-01T00:00:00",
                    items=(replace(item, answers=(answer,)),))  # fmt: skip
    with Store(tmp_path / "s.duckdb") as store:
        both = studio.side_by_side(store, [good, worse], bp.id)
    first, second = both.runs
    assert first["reward"] == 1.0 and second["reward"] < 1.0
    assert (first["turns"], second["turns"]) == (good_turns := len(json.loads(
        item.answers[0].raw_text)["turns"]), 2) and good_turns >= 1  # fmt: skip
    assert second["calls"] == 3
    assert first["found"] == f"{len(set(bp.expected))} of {len(bp.expected)} expected"
    assert len(both.spans) == len(bp.expected)
    assert [row[good.label] for row in both.spans] == ["hit"] * len(bp.expected)
    assert [row[worse.label] for row in both.spans][1:] == ["miss"] * (len(bp.expected) - 1)


def test_two_runs_best_episodes_are_paired_turn_against_turn(tmp_path: Path) -> None:
    bp = _seed()
    task = Task(bp, corpus_root(bp.corpus))
    good = evaluate_agent(ReferencePolicy(), [task], label="one")
    (item,) = good.items
    half = _played(bp)
    answer = replace(item.answers[0], raw_text=json.dumps(half), reward=half["info"]["reward"])
    worse = replace(good, run_id="worse", created_at="2026-01-01T00:00:00",
                    items=(replace(item, answers=(answer,)),))  # fmt: skip
    single = replace(good, run_id="single", engine="mutations")
    with Store(tmp_path / "s.duckdb") as store:
        left, right = studio.best_episodes(store, [good, worse], bp.id)
        # A single-call run has no episode to set beside another.
        assert len(studio.best_episodes(store, [good, single], bp.id)) == 1
    assert (left.reward, right.reward) == (1.0, half["info"]["reward"])
    pairs = studio.paired_turns(left, right)
    assert len(pairs) == max(len(left.turns), len(right.turns)) == 2
    assert [p.number for p in pairs] == [1, 2]
    # Each side keeps its own calls in its own turn; the shorter episode's missing turn is None.
    assert pairs[0].right is not None and [c.name for c in pairs[0].right.calls] == [
        bp.reference_call.name.value, "read_file", "grep_everything"]  # fmt: skip
    assert pairs[0].left == left.turns[0]
    one_turn = replace(right, turns=right.turns[:1])
    assert studio.paired_turns(left, one_turn)[1].right is None


def test_an_episode_is_offered_the_other_episodes_of_its_task_only(tmp_path: Path) -> None:
    bp = _seed()
    other_bp = next(b for b in load_seed_blueprints() if b.plan is None and b.id != bp.id)

    def stored(blueprint: Blueprint, trajectory: dict[str, Any], engine: str) -> StoredEpisode:
        info = trajectory["info"]
        return StoredEpisode(blueprint.id, blueprint.corpus, engine, "", info["reward"],
                             info["components"], 1.0, len(trajectory["turns"]), info["calls"], 0,
                             "submitted", trajectory)  # fmt: skip

    full = evaluate_agent(ReferencePolicy(), [Task(bp, corpus_root(bp.corpus))], label="r")
    full_trajectory = json.loads(full.items[0].answers[0].raw_text)
    elsewhere = evaluate_agent(ReferencePolicy(), [Task(other_bp, corpus_root(other_bp.corpus))])
    mine, theirs = stored(bp, full_trajectory, "reference"), stored(bp, _played(bp), "openai")
    unrelated = stored(other_bp, json.loads(elsewhere.items[0].answers[0].raw_text), "reference")
    with Store(tmp_path / "s.duckdb") as store:
        store.episodes.save([mine, theirs, unrelated])
        offered = studio.other_episodes(store, mine)
    assert [e.episode_id for e in offered] == [theirs.episode_id]
    assert studio.episode_label(offered[0]).startswith("openai · reward ")


def test_the_reward_parts_carry_their_weights_and_add_up_to_the_reward() -> None:
    bp = _seed()
    half = _played(bp)
    view = studio.trajectory_view(half, bp, corpus=bp.corpus)
    parts = {p["component"]: p for p in view.reward_parts}
    assert parts["R_find"]["weight"] == RewardWeights().find
    assert parts["R_find"]["weighted"] == RewardWeights().find * parts["R_find"]["value"]
    total = sum(p["weighted"] for p in view.reward_parts)
    assert abs(total - view.reward) < 1e-9  # within [-1, 1]: no clamp
    assert view.reward_sum == f"The weighted parts add up to {total:.3f}: reward {view.reward:.3f}."
    # The weights the episode was played with, not the defaults: a stored episode keeps them.
    heavy = GymSettings(weights=RewardWeights(find=2.0))
    stored = StoredEpisode(bp.id, bp.corpus, "openai", "", half["info"]["reward"],
                           half["info"]["components"], 0.5, 2, 3, 1, "submitted", half,
                           settings=heavy.to_dict())  # fmt: skip
    again = studio.episode_trajectory(stored, bp)
    assert {p["component"]: p["weight"] for p in again.reward_parts}["R_find"] == 2.0
    # An episode that never submitted earns 0, whatever its parts add up to.
    unsubmitted = {**half, "submit": None}
    assert studio.trajectory_view(unsubmitted, bp, corpus=bp.corpus).reward_sum.startswith(
        "No submit: the reward is 0"
    )
