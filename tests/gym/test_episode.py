"""An episode with the real tools: turns, parallel calls, limits, refusals, determinism."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from codesearch_core.gym import (
    EndReason,
    Episode,
    GymSettings,
    ReferencePolicy,
    Refusal,
    Task,
    gym_tools,
)


def submit_expected(task: Task) -> dict[str, object]:
    return {
        "name": "submit",
        "arguments": {"locations": [s.to_dict() for s in task.blueprint.expected]},
    }


def test_the_user_turn_names_the_intent_and_corpus_and_the_tools_are_four(
    single_task: Task,
) -> None:
    episode = Episode(single_task.blueprint, single_task.corpus_root)
    system, user = episode.messages()
    assert system["role"] == "system" and "submit" in system["content"]
    assert single_task.blueprint.intent in user["content"]
    assert single_task.blueprint.corpus in user["content"]
    names = [t["function"]["name"] for t in gym_tools()]
    assert names == ["ast_grep_search", "ripgrep_search", "read_file", "submit"]


def test_a_search_observation_is_the_exports_and_submit_ends_with_the_grade(
    single_task: Task,
) -> None:
    bp = single_task.blueprint
    episode = Episode(bp, single_task.corpus_root)
    step = episode.step([bp.reference_call.to_dict()])
    assert not step.done
    (obs,) = step.observations
    assert obs.error == "" and obs.findings == len(bp.expected)
    first = bp.expected[0]
    assert obs.text.startswith(f"{first.path}:{first.start_line}")
    end = episode.step([submit_expected(single_task)])
    assert end.done
    result = episode.result()
    assert result.end_reason == EndReason.SUBMITTED
    assert result.reward == pytest.approx(1.0)
    assert result.components["R_find"] == pytest.approx(1.0)
    assert result.components["R_scope"] == pytest.approx(1.0)
    assert result.calls == 1 and len(result.turns) == 2


def test_arguments_as_json_text_and_openai_tool_calls_are_accepted(single_task: Task) -> None:
    bp = single_task.blueprint
    episode = Episode(bp, single_task.corpus_root)
    call = {
        "id": "call_1",
        "type": "function",
        "function": {
            "name": bp.reference_call.name.value,
            "arguments": json.dumps(dict(bp.reference_call.arguments)),
        },
    }
    (obs,) = episode.step([call]).observations
    assert obs.error == "" and obs.findings == len(bp.expected)
    assert obs.call.call_id == "call_1"


def test_the_calls_of_a_turn_past_the_parallel_limit_are_refused_and_counted(
    single_task: Task,
) -> None:
    bp = single_task.blueprint
    episode = Episode(bp, single_task.corpus_root)
    step = episode.step([bp.reference_call.to_dict()] * 100)
    ran = [o for o in step.observations if o.error == ""]
    refused = [o for o in step.observations if o.error == Refusal.TOO_MANY_CALLS]
    assert len(ran) == 8 and len(refused) == 92
    assert "call 9 of 100" in refused[0].text
    episode.step([submit_expected(single_task)])
    result = episode.result()
    assert result.calls == 100 and result.invalid_calls == 92
    # 92 calls beyond the free 8: the effort term outweighs a perfect grade
    assert result.components["R_calls"] == -92.0
    assert result.reward == pytest.approx(1.0 - 0.02 * 92)
    assert result.reward < 0


def test_an_agent_that_never_submits_scores_zero_at_the_turn_limit(single_task: Task) -> None:
    bp = single_task.blueprint
    episode = Episode(bp, single_task.corpus_root, GymSettings(max_turns=2))
    assert not episode.step([bp.reference_call.to_dict()]).done
    last = episode.step([bp.reference_call.to_dict()])
    assert last.done
    result = episode.result()
    assert result.end_reason == EndReason.TURN_LIMIT
    assert result.reward == 0.0 and result.submitted is None
    assert result.components["R_submit"] == 0.0
    # a turn after the end is refused, whole, and changes nothing
    after = episode.step([submit_expected(single_task)])
    assert after.done and after.observations[0].error == Refusal.EPISODE_OVER
    assert episode.result() is result


def test_an_answer_without_a_call_ends_the_episode_unsubmitted(single_task: Task) -> None:
    episode = Episode(single_task.blueprint, single_task.corpus_root)
    assert episode.step([]).done
    assert episode.result().end_reason == EndReason.NO_CALL
    assert episode.result().reward == 0.0


@pytest.mark.parametrize(
    ("call", "kind"),
    [
        ({"name": "grep", "arguments": {}}, Refusal.UNKNOWN_TOOL),
        ({"name": "ripgrep_search", "arguments": "{pattern: oops"}, Refusal.MALFORMED_JSON),
        ({"name": "ripgrep_search", "arguments": ["pattern"]}, Refusal.INVALID_ARGUMENTS),
        (
            {"name": "ripgrep_search", "arguments": {"pattern": "x", "colour": True}},
            Refusal.INVALID_ARGUMENTS,
        ),
        (
            {"name": "ripgrep_search", "arguments": {"pattern": "x", "paths": ["../../etc"]}},
            "path_outside_corpus",
        ),
        (
            {"name": "ast_grep_search", "arguments": {"pattern": "f($A)", "language": "cobol"}},
            Refusal.INVALID_ARGUMENTS,
        ),
        ({"name": "read_file", "arguments": {"path": "/etc/passwd"}}, Refusal.PATH_OUTSIDE_CORPUS),
        (
            {"name": "read_file", "arguments": {"path": "x", "start_line": "one"}},
            Refusal.INVALID_ARGUMENTS,
        ),
        (
            {
                "name": "submit",
                "arguments": {"locations": [{"path": "a", "start_line": 3, "end_line": 1}]},
            },
            Refusal.INVALID_ARGUMENTS,
        ),
        ({"name": "submit", "arguments": {"locations": "everything"}}, Refusal.INVALID_ARGUMENTS),
        ({"arguments": {}}, Refusal.MALFORMED),
        ("ripgrep_search(pattern='x')", Refusal.MALFORMED),
    ],
)
def test_a_bad_call_gets_an_error_observation_that_counts_never_an_exception(
    single_task: Task, call: object, kind: str
) -> None:
    episode = Episode(single_task.blueprint, single_task.corpus_root)
    step = episode.step([call])
    (obs,) = step.observations
    assert obs.error == kind, obs.text
    assert obs.text.startswith(f"error ({kind}): ")
    assert not step.done  # a refused submit does not end the episode either
    episode.step([submit_expected(single_task)])
    result = episode.result()
    assert result.calls == 1 and result.invalid_calls == 1


def test_an_invalid_pattern_is_the_tools_error_and_counts_as_invalid(single_task: Task) -> None:
    episode = Episode(single_task.blueprint, single_task.corpus_root)
    (obs,) = episode.step(
        [{"name": "ripgrep_search", "arguments": {"pattern": "(unclosed"}}]
    ).observations
    assert obs.error == "invalid_pattern" and obs.text.startswith("error (invalid_pattern)")


def test_a_ripgrep_call_needing_pcre2_without_it_costs_the_pcre2_term(
    seed_tasks: dict[str, Task],
) -> None:
    task = next(
        t
        for t in seed_tasks.values()
        if t.blueprint.plan is None and t.blueprint.reference_call.arguments.get("pcre2")
    )
    bp = task.blueprint
    episode = Episode(bp, task.corpus_root)
    without = {k: v for k, v in bp.reference_call.arguments.items() if k != "pcre2"}
    episode.step([{"name": "ripgrep_search", "arguments": without}, bp.reference_call.to_dict()])
    episode.step([submit_expected(task)])
    result = episode.result()
    assert result.components["R_pcre2_rule"] == -1.0
    assert result.reward == pytest.approx(0.5)


def test_a_call_that_times_out_is_an_error_observation(single_task: Task) -> None:
    settings = GymSettings(timeout_s=1e-6)
    episode = Episode(single_task.blueprint, single_task.corpus_root, settings)
    (obs,) = episode.step([single_task.blueprint.reference_call.to_dict()]).observations
    assert obs.error == "timeout", obs.text


def test_a_search_that_would_print_gigabytes_is_cut_and_its_observation_bounded(
    tmp_path: Path, single_task: Task
) -> None:
    root = tmp_path / "huge"
    root.mkdir()
    line = "x" * 5_000 + "\n"
    (root / "big.txt").write_text(
        line * 20_000, encoding="utf-8"
    )  # 100 MB of matches if printed whole
    bp = replace(single_task.blueprint, corpus="huge")
    episode = Episode(bp, root, GymSettings(max_findings=500))
    (obs,) = episode.step([{"name": "ripgrep_search", "arguments": {"pattern": "x+"}}]).observations
    assert obs.findings == 500
    assert len(obs.text) < 10_000
    assert "more matches" in obs.text and "truncated" in obs.text


def test_the_same_calls_give_the_same_episode(plan_task: Task) -> None:
    def once() -> dict[str, object]:
        episode = Episode(plan_task.blueprint, plan_task.corpus_root)
        ReferencePolicy().play(episode)
        return episode.stop().to_dict()

    assert once() == once()


def test_a_stopped_episode_scores_zero_and_keeps_its_turns(single_task: Task) -> None:
    episode = Episode(single_task.blueprint, single_task.corpus_root)
    episode.step([single_task.blueprint.reference_call.to_dict()])
    result = episode.stop()
    assert result.end_reason == EndReason.STOPPED and result.reward == 0.0
    assert len(result.turns) == 1
