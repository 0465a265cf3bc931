"""Correcting one step of a stored episode (`gym.correct`): the earlier turns are played again
in the real gym (real rg / ast-grep on the shipped corpora), the edited turn is played, then the
original's submit; the corrected episode is stored beside the original, linked to it, and the
`dpo-steps` export pairs the corrected call (chosen) with the original (rejected), read back by
`datasets` here and by TRL's `DPOTrainer` in the torch venv (marked `vllm`).

The original is a recorded 4-turn episode on the seed plan (a search, a read of its first expected
span, the second search, the submit) kept by `rollouts` as `codesearch rollouts --engine import`
keeps it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gym_support import reference_turns

from codesearch_core.errors import InputFileError
from codesearch_core.gym import (
    Episode,
    GymSettings,
    ReplayPolicy,
    Task,
    correct_step,
    episode_frame,
    export_step_pairs,
    read_recorded,
    rollouts,
)
from codesearch_core.store import Store, StoredEpisode
from tests.vllm_support.env import run_in_vllm_env, skip_reason, vllm_python

Calls = list[list[dict[str, Any]]]


def _four_turns(task: Task) -> tuple[Calls, list[dict[str, Any]]]:
    (first,), (second,), (submit,) = reference_turns(task)
    span = task.blueprint.expected[0]
    read = {"name": "read_file", "arguments": {"path": span.path, "start_line": span.start_line,
                                               "end_line": span.end_line}}  # fmt: skip
    return [[first], [read], [second]], submit["arguments"]["locations"]


@pytest.fixture
def stored(plan_task: Task, tmp_path: Path) -> Iterator[tuple[Store, StoredEpisode]]:
    turns, locations = _four_turns(plan_task)
    line = {"blueprint_id": plan_task.blueprint.id, "turns": turns, "submit": locations}
    recorded = tmp_path / "recorded.jsonl"
    recorded.write_text(json.dumps(line) + "\n", encoding="utf-8")
    with Store(tmp_path / "s.duckdb") as store:
        policy = ReplayPolicy(list(read_recorded(recorded)))
        assert rollouts(policy, [plan_task], store, min_reward=0.0).kept == 1
        (original,) = store.episodes.list()
        assert original.turns == 4 and original.end_reason == "submitted"
        yield store, original


def _calls(episode: StoredEpisode) -> Calls:
    return [[{"name": c["name"], "arguments": c["arguments"]} for c in t]
            for t in episode.trajectory["turns"]]  # fmt: skip


def _played(task: Task, settings: dict[str, Any], turns: Calls) -> list[list[str]]:
    """The observations the gym gives these turns, played now in an episode of its own."""
    episode = Episode(task.blueprint, task.corpus_root, GymSettings.from_dict(settings))
    return [[o.text for o in episode.step(t).observations] for t in turns]


def test_a_corrected_turn_is_played_after_the_earlier_turns_then_the_original_submit(
    stored: tuple[Store, StoredEpisode], plan_task: Task
) -> None:
    store, original = stored
    before = _calls(original)
    # Turn 3 searched again; the correction reads the second expected span instead.
    span = plan_task.blueprint.expected[-1]
    edit = {"name": "read_file", "arguments": {"path": span.path, "start_line": span.start_line,
                                               "end_line": span.end_line}}  # fmt: skip
    done = correct_step(store, original.episode_id, 3, edit)
    fixed = done.corrected
    assert done.stored and done.submit_replayed and done.turn == 3
    assert _calls(fixed) == [*before[:2], [edit], before[3]]
    assert (fixed.corrected_from, fixed.corrected_turn, fixed.engine) == (
        original.episode_id, 3, "correction",
    )  # fmt: skip
    # Every observation is the gym's for those calls, turn by turn.
    shown = [[c["observation"] for c in t] for t in fixed.trajectory["turns"]]
    assert shown == _played(plan_task, original.settings, _calls(fixed))
    assert fixed.end_reason == "submitted"
    # Kept beside the original, which is unchanged.
    assert store.episodes.get(fixed.episode_id) == store.episodes.list()[1]
    assert store.episodes.get(original.episode_id) == original
    # The same correction again stores nothing new.
    assert correct_step(store, original.episode_id, 3, edit).stored is False
    assert len(store.episodes.list()) == 2


def test_a_corrected_submit_ends_the_episode_at_that_turn(
    stored: tuple[Store, StoredEpisode], plan_task: Task
) -> None:
    store, original = stored
    first = plan_task.blueprint.expected[0].to_dict()
    done = correct_step(
        store, original.episode_id, 2, [{"name": "submit", "arguments": {"locations": [first]}}]
    )
    assert not done.submit_replayed
    assert [len(t) for t in done.corrected.trajectory["turns"]] == [1, 1]
    assert done.corrected.end_reason == "submitted"
    assert done.corrected.reward < original.reward  # one location of several


@pytest.mark.parametrize(
    ("turn", "calls", "error"),
    [
        (2, {"name": "grep", "arguments": {}}, "edited call 1: unknown_tool: no tool named 'grep'"),
        (2, [{"name": "ripgrep_search", "arguments": "{not json"}], "arguments are not JSON"),
        (2, [], "holds one at least"),
        (
            2,
            [{"name": "ripgrep_search", "arguments": {"pattern": "(unclosed"}}],
            "fails in the gym",
        ),
        (5, {"name": "ripgrep_search", "arguments": {"pattern": "x"}}, "has turns 1 to 4, not 5"),
    ],
)
def test_a_bad_edit_is_a_clear_error_and_stores_nothing(
    stored: tuple[Store, StoredEpisode], turn: int, calls: Any, error: str
) -> None:
    store, original = stored
    with pytest.raises(InputFileError, match=error):
        correct_step(store, original.episode_id, turn, calls)
    assert store.episodes.list() == [original]


def test_an_edit_equal_to_the_original_turn_is_refused(stored: tuple[Store, StoredEpisode]) -> None:
    store, original = stored
    with pytest.raises(InputFileError, match="turn 2's own: nothing to correct"):
        correct_step(store, original.episode_id, 2, _calls(original)[1])
    with pytest.raises(InputFileError, match="no stored episode 'nope'"):
        correct_step(store, "nope", 1, _calls(original)[0])


def _step_pairs(store: Store, original: StoredEpisode, plan_task: Task, folder: Path) -> Path:
    """Correct turn 2 (the read) with a search, label the read wrong, export `dpo-steps`."""
    edit = {"name": "ripgrep_search", "arguments": {"pattern": "SELECT \\*", "file_types": ["sql"]}}
    correct_step(store, original.episode_id, 2, edit)
    store.steps.label(original.episode_id, 2, 1, "wrong", "ann")
    store.steps.label(original.episode_id, 2, 1, "redundant", "bob")
    store.steps.label(original.episode_id, 2, 1, "wrong", "cy")
    out = folder / "dpo-steps.jsonl"
    manifest = export_step_pairs(store, out, with_meta=True)
    assert manifest.rows == 1 and manifest.counts["pairs"] == 1
    assert manifest.extra["episode_ids"] == [store.steps.corrections()[0].episode_id]
    return out


def test_the_step_pair_export_holds_the_conversation_and_both_calls_and_loads_with_datasets(
    stored: tuple[Store, StoredEpisode], plan_task: Task, tmp_path: Path
) -> None:
    import datasets

    store, original = stored
    out = _step_pairs(store, original, plan_task, tmp_path / "out")
    (row,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    opening = episode_frame().messages(plan_task.blueprint, original.settings)
    calls = _calls(original)
    first = original.trajectory["turns"][0][0]
    assert row["prompt"][:2] == opening
    assert [m["role"] for m in row["prompt"][2:]] == ["assistant", "tool"]
    assert row["prompt"][2]["tool_calls"][0]["function"] == calls[0][0]
    assert row["prompt"][3]["content"] == first["observation"]
    (chosen,), (rejected,) = row["chosen"], row["rejected"]
    assert [c["function"] for c in chosen["tool_calls"]] == [
        {"name": "ripgrep_search", "arguments": {"pattern": "SELECT \\*", "file_types": ["sql"]}}
    ]
    assert [c["function"] for c in rejected["tool_calls"]] == calls[1]
    assert [t["function"]["name"] for t in row["tools"]] == [
        t["function"]["name"] for t in episode_frame().tools
    ]
    meta = row["meta"]
    assert (meta["corrected_from"], meta["turn"]) == (original.episode_id, 2)
    assert meta["rejected_steps"] == [
        {"turn": 2, "call": 1, "counts": {"redundant": 1, "wrong": 2}, "label": "wrong"}
    ]
    # `datasets` reads the file as every export is read, and the folder through its card.
    home = tmp_path / "hf"
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    ds = datasets.load_dataset("json", data_files=str(out), split="train", cache_dir=str(home))
    assert ds.num_rows == 1 and ds[0]["chosen"] == row["chosen"]
    assert ds[0]["rejected"] == row["rejected"]
    plain = tmp_path / "plain"
    export_step_pairs(store, plain / "dpo-steps.jsonl")
    carded = datasets.load_dataset(str(plain), name="dpo-steps", split="train",
                                   cache_dir=str(home / "card"))  # fmt: skip
    assert carded[0]["prompt"] == row["prompt"] and carded[0]["chosen"] == row["chosen"]


def test_a_rejected_correction_is_left_out_of_the_step_pairs(
    stored: tuple[Store, StoredEpisode], plan_task: Task, tmp_path: Path
) -> None:
    from codesearch_core.store import EPISODE

    store, original = stored
    _step_pairs(store, original, plan_task, tmp_path / "a")
    (fixed,) = store.steps.corrections()
    store.queue(EPISODE).decide(fixed.episode_id, "reject", "ann")
    assert store.steps.corrections() == []
    assert export_step_pairs(store, tmp_path / "b" / "dpo-steps.jsonl").rows == 0


# TRL's own reader, in the torch venv: the rows as `datasets` loads them, checked conversational
# by `trl.data_utils`, rendered by `maybe_apply_chat_template` and tokenized by `DPOTrainer`, which
# then takes one step on the tiny random Qwen2 (tests/vllm_support).
TRL_SNIPPET = r"""
import json, os
from datasets import load_dataset
from transformers import AutoTokenizer
from trl import DPOConfig, DPOTrainer
from trl.chat_template_utils import qwen2_5_chat_template
from trl.data_utils import is_conversational, maybe_apply_chat_template

ds = load_dataset("json", data_files=os.environ["PAIRS"], split="train")
tokenizer = AutoTokenizer.from_pretrained(os.environ["TINY_MODEL"])
tokenizer.chat_template = qwen2_5_chat_template
row = ds[0]
text = maybe_apply_chat_template(row, tokenizer, tools=row["tools"])
trainer = DPOTrainer(
    model=os.environ["TINY_MODEL"], processing_class=tokenizer, train_dataset=ds,
    args=DPOConfig(output_dir=os.environ["OUT_DIR"], max_steps=1, per_device_train_batch_size=1,
                   max_length=None, use_cpu=True, bf16=False, report_to="none",
                   save_strategy="no", logging_steps=1),
)
tokenized = trainer.train_dataset[0]
trainer.train()
print("@@RESULT@@" + json.dumps({
    "conversational": is_conversational(row),
    "text": text,
    "chosen": tokenizer.decode(tokenized["chosen_ids"]),
    "rejected": tokenizer.decode(tokenized["rejected_ids"]),
    "prompt_tail": tokenizer.decode(tokenized["prompt_ids"][-400:]),
    "loss": [h["loss"] for h in trainer.state.log_history if "loss" in h],
}), flush=True)
os._exit(0)
"""


@pytest.mark.vllm
@pytest.mark.skipif(vllm_python() is None, reason=skip_reason())
@pytest.mark.timeout(900)
def test_trls_dpo_trainer_reads_the_step_pairs(
    stored: tuple[Store, StoredEpisode],
    plan_task: Task,
    tmp_path: Path,
    long_tiny_model: Path,
) -> None:
    store, original = stored
    out = _step_pairs(store, original, plan_task, tmp_path / "out")
    proc = run_in_vllm_env(TRL_SNIPPET, timeout=850, env_extra={
        "PAIRS": str(out), "TINY_MODEL": str(long_tiny_model), "OUT_DIR": str(tmp_path / "dpo"),
        "HF_DATASETS_OFFLINE": "1", "TRL_EXPERIMENTAL_SILENCE": "1"})  # fmt: skip
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("@@RESULT@@")]
    assert proc.returncode == 0 and lines, f"{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    result = json.loads(lines[-1][len("@@RESULT@@") :])
    assert result["conversational"] is True
    # The rendered pair: the corrected call is the chosen completion, the original's the rejected,
    # each a <tool_call> of its own arguments, after the conversation's first call and its result.
    assert '"pattern": "SELECT \\\\*"' in result["text"]["chosen"]
    read = original.trajectory["turns"][1][0]
    assert f'"path": "{read["arguments"]["path"]}"' in result["text"]["rejected"]
    assert "<tool_response>" in result["text"]["prompt"]
    assert "<tool_call>" in result["chosen"] and "SELECT" in result["chosen"]
    assert "read_file" in result["rejected"] and "SELECT" not in result["rejected"]
    assert "<tool_response>" in result["prompt_tail"]
    assert len(result["loss"]) == 1
