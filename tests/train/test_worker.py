"""`codesearch train` end to end: the command in this venv, the training in the torch venv
(`.ci/vllm_venv.sh`), two steps of each mode on the tiny random Qwen2 of tests/vllm_support on CPU.
Skipped without the venv. The run's record, the model folder's sha256, the rows left out for
the context, a clean Ctrl-C. What the weights learn is the benchmark's (bench_learning.py)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ctrl_c_support import ctrl_c_when

from codesearch_core.train import folder_sha256, read_record, record_path
from tests.vllm_support.env import skip_reason, tiny_model_dir, vllm_python, vllm_venv_dir

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(vllm_python() is None, reason=skip_reason()),
]


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny Qwen2 with room for 8192 positions: a row with the tools' schemas is 2-3k of its
    tokens (its rotary positions have no weights, so only the config changes)."""
    dest = tmp_path_factory.mktemp("train-model") / "tiny-qwen2-8k"
    shutil.copytree(tiny_model_dir(tmp_path_factory), dest)
    for name, key in (("config.json", "max_position_embeddings"),
                      ("tokenizer_config.json", "model_max_length")):  # fmt: skip
        data = json.loads((dest / name).read_text())
        data[key] = 8192
        (dest / name).write_text(json.dumps(data))
    return dest


def _env() -> dict[str, str]:
    return {**os.environ, "CODESEARCH_VLLM_VENV": str(vllm_venv_dir()), "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}  # fmt: skip


def train(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "codesearch_core", "train", *args],
                          capture_output=True, text=True, env=_env(), timeout=400)  # fmt: skip


def _no_leftovers(out: Path) -> None:
    assert not out.with_name(f".{out.name}.partial").exists()


@pytest.mark.timeout(450)
def test_sft_two_steps_write_the_model_its_record_and_what_the_context_left_out(
    model: Path, small_dataset: Path, tmp_path: Path
) -> None:
    out = tmp_path / "runs" / "sft"
    proc = train("sft", "--model", str(model), "--data", str(small_dataset), "--out", str(out),
                 "--max-steps", "2", "--batch-size", "2", "--limit", "8", "--max-length", "2600",
                 "--device", "cpu")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= {p.name for p in out.iterdir()}
    _no_leftovers(out)
    record = read_record(record_path(out))
    card = hashlib.sha256((small_dataset / "card.json").read_bytes()).hexdigest()
    assert (record.status, record.mode, record.device) == ("done", "sft", "cpu")
    assert record.dataset_card_sha256 == card
    assert record.model_sha256 == folder_sha256(model)
    assert record.output_sha256 == folder_sha256(out) != record.model_sha256
    assert record.settings["max_steps"] == 2 and record.settings["max_length"] == 2600
    assert record.metrics["steps"] == 2
    # Rows past --max-length are left out, counted in the record and said on stderr.
    context = record.context
    assert context["limit"] == 2600 and context["kept"] + context["left_out"] == 8
    assert context["left_out"] >= 1 and context["kept"] >= 1, context
    said = re.search(r"(\d+) of (\d+) rows are longer than the 2600 tokens", proc.stderr)
    assert said and (int(said[1]), int(said[2])) == (context["left_out"], 8)


@pytest.mark.timeout(450)
def test_rft_keeps_only_verified_episodes(model: Path, small_dataset: Path, tmp_path: Path) -> None:
    common = ["--model", str(model), "--data", str(small_dataset), "--limit", "3",
              "--max-steps", "2", "--batch-size", "2", "--k", "2"]  # fmt: skip
    # The random model's own rollouts: none verified, so nothing to train on, and no model.
    none = tmp_path / "rft-model"
    proc = train("rft", *common, "--out", str(none), "--max-new-tokens", "16")
    assert proc.returncode == 1, proc.stderr[-4000:]
    assert "RFT kept no episode, nothing to train on: 0 episode(s) kept of 6 played" in proc.stderr
    assert not none.exists()
    _no_leftovers(none)
    record = read_record(record_path(none))
    assert record.status == "nothing_to_train" and record.rows["rollouts"]["played"] == 6
    # The blueprints' own calls verify: one kept per task (the second play is a duplicate).
    out = tmp_path / "rft-reference"
    proc = train("rft", *common, "--out", str(out), "--sampler", "reference")
    assert proc.returncode == 0, proc.stderr[-4000:]
    record = read_record(record_path(out))
    rollouts = record.rows["rollouts"]
    assert (rollouts["kept"], rollouts["duplicates"], rollouts["played"]) == (3, 3, 6)
    assert record.status == "done" and record.metrics["steps"] == 2
    assert record.output_sha256 == folder_sha256(out)


@pytest.mark.timeout(450)
def test_grpo_two_steps_play_the_gym(model: Path, small_dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "grpo"
    proc = train("grpo", "--model", str(model), "--data", str(small_dataset), "--out", str(out),
                 "--limit", "2", "--max-steps", "2", "--batch-size", "2", "--num-generations", "2",
                 "--max-completion-length", "32")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    record = read_record(record_path(out))
    assert record.status == "done" and record.output_sha256 == folder_sha256(out)
    assert record.metrics["episodes"] == 4  # 2 steps x (1 prompt x 2 generations)
    assert record.context["kept"] == 2 and record.context["left_out"] == 0


@pytest.mark.timeout(300)
def test_ctrl_c_stops_cleanly_without_a_model_folder(
    model: Path, small_dataset: Path, tmp_path: Path
) -> None:
    out = tmp_path / "stopped"
    stopped = ctrl_c_when(
        [
            "train",
            "sft",
            "--model",
            str(model),
            "--data",
            str(small_dataset),
            "--out",
            str(out),
            "--max-steps",
            "500",
            "--batch-size",
            "1",
            "--limit",
            "4",
        ],
        rb"step 1/500: loss",  # a step has run: training is under way
        env=_env(),
    )
    assert stopped.returncode == 130, stopped.terminal[-3000:]
    assert "interrupted: no model written" in stopped.terminal
    assert not out.exists()
    _no_leftovers(out)
    assert read_record(record_path(out)).status == "interrupted"
