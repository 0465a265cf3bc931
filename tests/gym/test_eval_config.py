"""An agent eval's TOML file (`gym.eval_config`) and what resuming a run rests on
(`gym.evaluate`: `Resume`, `replayed`): vf-eval's key names, every default in `to_dict`, the keys
that differ named, and a stored episode that replays to another reward refused."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from codesearch_core.errors import InputFileError
from codesearch_core.gym import ReferencePolicy, Task, evaluate_agent
from codesearch_core.gym.eval_config import config_differences, load_eval_config
from codesearch_core.gym.evaluate import Resume, replayed
from codesearch_core.gym.settings import DEFAULT_SETTINGS, GymSettings
from codesearch_core.store import UNFINISHED, EvalRun


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "eval.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_vf_evals_keys_and_the_gyms_are_read_with_every_default_filled_in(tmp_path: Path) -> None:
    config = load_eval_config(
        write(
            tmp_path,
            """
engine = "openai"
model = "Qwen/Qwen3-8B"
rollouts_per_example = 3  # vf-eval's other name for num_rollouts
max_concurrent = 16

[client]
base_url = "http://127.0.0.1:8000/v1"
api_key_var = "MY_KEY"

[sampling]
temperature = 0.6
max_tokens = 2048

[select]
blueprints = "seeds-all"
tag = "plan"
limit = 5

[env]
max_turns = 6
timeout_s = 10

[env.weights]
find = 0.7
""",
        )
    )
    assert (config.engine, config.model, config.num_rollouts) == ("openai", "Qwen/Qwen3-8B", 3)
    assert config.client["base_url"] == ["http://127.0.0.1:8000/v1"]  # one URL: a list of one
    assert config.settings.max_turns == 6 and config.settings.timeout_s == 10
    assert config.settings.weights.find == 0.7
    assert config.settings.weights.scope == DEFAULT_SETTINGS.weights.scope
    stored = config.to_dict()
    assert stored["num_rollouts"] == 3 and "rollouts_per_example" not in stored
    assert stored["sampling"] == {"temperature": 0.6, "top_p": None, "max_tokens": 2048,
                                  "seed": None}  # fmt: skip
    assert stored["select"]["split"] is None and stored["env"] == config.settings.to_dict()
    # What a resumed run compares: the same file read again is the same; an edit is named.
    assert load_eval_config(config.path).to_dict() == stored
    changed = {**stored, "env": {**stored["env"], "max_turns": 4}, "model": "other"}
    assert config_differences(stored, changed) == ["model", "env.max_turns"]


def test_an_import_files_path_is_relative_to_the_config(tmp_path: Path) -> None:
    config = load_eval_config(write(tmp_path, 'engine = "import"\nfrom = "eps/a.jsonl"\n'))
    assert config.import_file == tmp_path / "eps" / "a.jsonl"
    assert config.to_dict()["from"] == "eps/a.jsonl"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "engine: missing"),
        ('engine = "import"\n', "from: the recorded episodes"),
        ('engine = "reference"\nfrom = "a.jsonl"\n', "from: the recorded episodes"),
        ('engine = "reference"\nnum_rollouts = 0\n', "num_rollouts: must be at least 1"),
        ('engine = "reference"\nnum_rollouts = true\n', "num_rollouts: must be int"),
        ('engine = "reference"\nn = 2\nnum_rollouts = 2\n', "n: not a key of the file"),
        ('engine = "reference"\nrollouts_per_example = 2\nnum_rollouts = 2\n', "given twice"),
        ('engine = "reference"\n[select]\nsplit = "test"\n', "select.split: must be 'train'"),
        ('engine = "reference"\n[client]\nbase_url = []\n', "client.base_url: must be a URL"),
        ('engine = "reference"\nclient = 3\n', "client: must be a table"),
        ('engine = "reference"\n[env]\nturns = 3\n', "env.turns: not a setting"),
        ('engine = "reference"\n[env]\nmax_turns = "4"\n', "env.max_turns: must be a number"),
        ('engine = "reference"\n[env.weights]\nfnd = 1\n', "env.weights.fnd: not one of"),
        ('engine = "reference"\n[env]\nweights = 1\n', "env.weights: must be a table"),
    ],
)
def test_a_mistake_names_the_file_and_the_key(tmp_path: Path, text: str, says: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(InputFileError, match=says) as caught:
        load_eval_config(path)
    assert str(path) in str(caught.value)


def test_a_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="cannot read the eval config"):
        load_eval_config(tmp_path / "none.toml")


def test_a_resumed_run_keeps_its_episodes_and_a_changed_one_is_refused(
    single_task: Task, plan_task: Task
) -> None:
    saved: list[EvalRun] = []
    first = Resume("run-1", "2026-11-28T10:00:00", saved.append, every_s=0.0)
    # Played on one task only: the run is stored unfinished after each episode (every_s=0).
    begun = evaluate_agent(ReferencePolicy(), [single_task], n=2, resume=first)
    assert [UNFINISHED in r.summary for r in saved] == [True, True, False]
    assert saved[0].summary[UNFINISHED] == {"episodes": 1, "of": 2}
    tasks = [single_task, plan_task]
    done = replayed(begun, tasks, GymSettings())
    assert sorted(done) == [(single_task.blueprint.id, 0), (single_task.blueprint.id, 1)]
    assert [r.reward for r in done.values()] == [a.reward for a in begun.items[0].answers]
    resumed = evaluate_agent(ReferencePolicy(), tasks, n=2,
                             resume=replace(first, done=done, checkpoint=saved.append))  # fmt: skip
    assert resumed.run_id == "run-1" and resumed.created_at == "2026-11-28T10:00:00"
    assert resumed.items[0].answers == begun.items[0].answers
    assert [len(i.answers) for i in resumed.items] == [2, 2]
    # A stored episode whose reward its replay does not give is not mixed into a run.
    (item,) = begun.items
    tampered = replace(item, answers=(replace(item.answers[0], reward=0.5), *item.answers[1:]))
    with pytest.raises(InputFileError, match="replays to reward"):
        replayed(replace(begun, items=(tampered,)), tasks, GymSettings())
    with pytest.raises(InputFileError, match="not in the task set"):
        replayed(begun, [plan_task], GymSettings())


def test_the_docs_example_is_a_valid_config(tmp_path: Path) -> None:
    doc = Path(__file__).resolve().parents[2] / "docs" / "gym_verifiers.md"
    block = doc.read_text(encoding="utf-8").split("```toml\n", 1)[1].split("```", 1)[0]
    config = load_eval_config(write(tmp_path, block))
    assert (config.engine, config.num_rollouts, config.select["limit"]) == ("openai", 4, 20)
    assert config.client["api_key_var"] == "MODEL_API_KEY"
