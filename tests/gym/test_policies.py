"""The policies without a model: the reference scores success on every seed; recorded episodes
replay through the environment, which checks their calls as it checks a model's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codesearch_core.errors import InputFileError
from codesearch_core.grading import grade
from codesearch_core.gym import (
    ReferencePolicy,
    ReplayPolicy,
    Task,
    evaluate_agent,
    play,
    read_recorded,
)
from codesearch_core.tools import run_plan, run_tool_call


def test_the_reference_policy_succeeds_on_every_seed_and_agrees_with_the_studios_grade(
    seed_tasks: dict[str, Task],
) -> None:
    run = evaluate_agent(ReferencePolicy(), list(seed_tasks.values()))
    assert run.summary["overall"]["success_rate"] == 1.0
    for item in run.items:
        task = seed_tasks[item.blueprint_id]
        bp = task.blueprint
        # the studio's own grade of the reference run, as `codesearch grade` computes it
        ran = (
            run_plan(bp.plan, task.corpus_root)
            if bp.plan
            else run_tool_call(bp.reference_call, task.corpus_root)
        )
        studio = grade(ran.findings, bp.expected)
        assert item.answers[0].span_f1 == pytest.approx(studio.span_f1), bp.id


def test_a_plan_seed_is_played_in_several_turns(plan_task: Task) -> None:
    result = play(ReferencePolicy(), plan_task)
    assert len(result.turns) == len(plan_task.blueprint.plan.steps) + 1  # type: ignore[union-attr]
    assert result.success


def write_lines(path: Path, lines: list[object]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_an_imported_counter_call_episode_scores_below_the_reference(
    seed_tasks: dict[str, Task], tmp_path: Path
) -> None:
    task = next(
        t for t in seed_tasks.values() if t.blueprint.counter_calls and t.blueprint.plan is None
    )
    bp = task.blueprint
    counter = bp.counter_calls[0].call
    found = run_tool_call(counter, task.corpus_root).findings
    submit = [{"path": f.path, "start_line": f.start_line, "end_line": f.end_line} for f in found]
    path = write_lines(
        tmp_path / "ep.jsonl",
        [{"blueprint_id": bp.id, "turns": [[counter.to_dict()]], "submit": submit}],
    )
    replayed = play(ReplayPolicy(list(read_recorded(path))), task)
    reference = play(ReferencePolicy(), task)
    assert replayed.submitted is not None
    assert replayed.reward < reference.reward


def test_a_recorded_episode_without_submit_never_submitted(
    single_task: Task, tmp_path: Path
) -> None:
    bp = single_task.blueprint
    path = write_lines(
        tmp_path / "ep.jsonl", [{"blueprint_id": bp.id, "turns": [[bp.reference_call.to_dict()]]}]
    )
    result = play(ReplayPolicy(list(read_recorded(path))), single_task)
    assert result.submitted is None and result.reward == 0.0


def test_a_replay_of_a_recorded_trajectory_gives_the_same_observations(
    plan_task: Task, tmp_path: Path
) -> None:
    original = play(ReferencePolicy(), plan_task).to_dict()
    turns = [
        [{"name": c["name"], "arguments": c["arguments"]} for c in turn]
        for turn in original["turns"][:-1]
    ]
    path = write_lines(
        tmp_path / "ep.jsonl",
        [{"blueprint_id": plan_task.blueprint.id, "turns": turns, "submit": original["submit"]}],
    )
    replayed = play(ReplayPolicy(list(read_recorded(path))), plan_task).to_dict()
    assert replayed == original


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("not json", "not JSON"),
        ("[1, 2]", "a JSON object"),
        ('{"turns": []}', "blueprint_id"),
        ('{"blueprint_id": "x", "turns": [{"name": "submit"}]}', "turns must be a list of turns"),
        ('{"blueprint_id": "x", "submit": "all"}', "submit must be a list"),
    ],
)
def test_a_bad_import_line_is_an_error_naming_the_line(
    tmp_path: Path, line: str, says: str
) -> None:
    path = tmp_path / "ep.jsonl"
    path.write_text('{"blueprint_id": "ok", "turns": []}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=says) as err:
        list(read_recorded(path))
    assert f"{path}:2" in str(err.value)
