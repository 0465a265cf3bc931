"""RFT's choice of episodes: the verified kept, best first, duplicates once, as `hf-agent` rows."""

from __future__ import annotations

from codesearch_core import gym
from codesearch_core.train import verified_rows

SIMPLE = ("webshop-todo-fixme-comments", "webshop-useeffect-calls-tsx")


def _tasks() -> list[gym.Task]:
    return [t for t in gym.as_tasks(gym.seed_blueprints()).tasks if t.blueprint.id in SIMPLE]


def test_reference_episodes_become_agent_rows_and_duplicates_count_once() -> None:
    tasks = _tasks()
    played = [(t, [gym.play(gym.ReferencePolicy(), t) for _ in range(2)]) for t in tasks]
    rows, tally = verified_rows(played, min_reward=0.9)
    assert (tally.tasks, tally.played, tally.kept, tally.duplicates) == (2, 4, 2, 2)
    assert tally.solved_tasks == 2 and tally.end_reasons == {"submitted": 4}
    for task, row in zip(tasks, rows, strict=True):
        messages = row["messages"]
        # The gym's own opening, then the agent's turns: a search, its observation, the submit.
        assert messages[:2] == gym.prompt_messages(task.blueprint, gym.DEFAULT_SETTINGS)
        assert [m["role"] for m in messages[2:]] == ["assistant", "tool", "assistant"]
        search, submit = messages[2]["tool_calls"][0], messages[4]["tool_calls"][0]
        assert search["function"] == task.blueprint.reference_call.to_dict()
        assert submit["function"]["name"] == "submit"
        assert messages[3]["content"] == played[tasks.index(task)][1][0].turns[0][0].text
        assert {t["function"]["name"] for t in row["tools"]} == set(gym.TOOL_NAMES)


def test_episodes_below_the_minimum_or_without_a_call_are_not_kept() -> None:
    task = _tasks()[0]
    silent = gym.ReplayPolicy([], model="nobody")  # plays nothing: the episode ends unsubmitted
    played = [(task, [gym.play(silent, task), gym.play(gym.ReferencePolicy(), task)])]
    rows, tally = verified_rows(played, min_reward=0.5)
    assert (tally.kept, tally.below_min_reward) == (1, 1) and len(rows) == 1
    rows, tally = verified_rows(played, min_reward=0.0)  # the silent one passes, but has no call
    assert (tally.kept, tally.no_call, tally.below_min_reward) == (1, 1, 0)
    assert "1 episode(s) kept of 2 played on 1 task(s)" in tally.line(0.0)
