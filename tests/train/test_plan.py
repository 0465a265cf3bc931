"""A run prepared without torch: the work folder, the spec, and every argument error up front."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codesearch_core.errors import InputFileError
from codesearch_core.train import Settings, Spec, check_settings, prepare, work_folder


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """A folder shaped like a Hugging Face model (planning reads no weights)."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    return folder


def test_sft_writes_rows_and_spec_beside_the_output(
    small_dataset: Path, model: Path, tmp_path: Path
) -> None:
    out = tmp_path / "runs" / "sft-1"
    spec = prepare("sft", str(model), small_dataset, out, settings=Settings(max_steps=2), limit=3)
    work = work_folder(out.resolve())
    assert Path(spec.work) == work and work.name == ".sft-1.partial" and not out.exists()
    assert Spec.read(work / "spec.json") == spec
    rows = [json.loads(line) for line in (work / "rows.jsonl").read_text().splitlines()]
    assert spec.rows == {"rows": len(rows), "items": len(rows), "episodes": 0, "left_out": {}}
    assert len(rows) <= 3 and all(r["messages"][2]["role"] == "assistant" for r in rows)
    card = json.loads((small_dataset / "card.json").read_text())
    assert spec.card_sha256 != "" and card  # the card the record will cite


def test_rft_and_grpo_write_the_split_as_tasks(
    small_dataset: Path, model: Path, tmp_path: Path
) -> None:
    spec = prepare("grpo", str(model), small_dataset, tmp_path / "g", settings=Settings())
    tasks = (Path(spec.work) / "tasks.jsonl").read_text().splitlines()
    train = (small_dataset / "data" / "train.jsonl").read_text().splitlines()
    assert spec.rows == {"tasks": len(train)} and len(tasks) == len(train)
    assert [json.loads(t)["id"] for t in tasks] == [json.loads(i)["id"] for i in train]


@pytest.mark.parametrize(
    ("mode", "settings", "message"),
    [
        ("sft", Settings(batch_size=0), "--batch-size must be at least 1"),
        ("sft", Settings(learning_rate=2.0), "--lr must be in"),
        ("sft", Settings(epochs=0), "--epochs must be above 0"),
        ("rft", Settings(min_reward=1.5), "--min-reward must be in"),
        ("grpo", Settings(num_generations=1), "at least 2: GRPO compares a group"),
        ("grpo", Settings(batch_size=3, num_generations=2), "must be a multiple of --num-gen"),
        ("grpo", Settings(max_length=256, max_completion_length=512), "--max-length must leave"),
        ("dpo", Settings(), "unknown mode 'dpo'"),
    ],
)
def test_bad_settings_are_argument_errors(mode: str, settings: Settings, message: str) -> None:
    with pytest.raises(InputFileError, match=message):
        check_settings(mode, "auto", "hf", settings)


def test_what_cannot_be_trained_is_refused_before_anything_is_written(
    small_dataset: Path, model: Path, tmp_path: Path
) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    with pytest.raises(InputFileError, match="exists: a run never writes over a model"):
        prepare("sft", str(model), small_dataset, taken, settings=Settings())
    with pytest.raises(InputFileError, match=r"not a model folder with a config\.json"):
        prepare(
            "sft", str(tmp_path / "no-model"), small_dataset, tmp_path / "o", settings=Settings()
        )
    with pytest.raises(InputFileError, match="not a built data set"):
        prepare("sft", str(model), tmp_path, tmp_path / "o", settings=Settings())
    with pytest.raises(InputFileError, match="--limit must be 0"):
        prepare("sft", str(model), small_dataset, tmp_path / "o", settings=Settings(), limit=-1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model", "taken"]
