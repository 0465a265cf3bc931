"""`codesearch train`: the errors a user meets before any training starts (the runs themselves:
tests/train/test_worker.py, in the torch venv)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesearch_core.cli import main


def test_without_a_torch_venv_the_error_says_how_to_get_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CODESEARCH_VLLM_VENV", str(tmp_path / "no-venv"))
    code = main(["train", "sft", "--model", str(tmp_path), "--data", str(tmp_path),
                 "--out", str(tmp_path / "out")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "training needs torch and TRL" in err and "bash .ci/vllm_venv.sh" in err
    assert not (tmp_path / "out").exists()


def test_db_without_episodes_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text("")  # found, never run: the arguments fail first
    monkeypatch.setenv("CODESEARCH_VLLM_VENV", str(venv.parent))
    code = main(["train", "sft", "--model", "m", "--data", "d", "--out", str(tmp_path / "o"),
                 "--db", str(tmp_path / "db")])  # fmt: skip
    assert code == 2 and "--db is the store of --episodes" in capsys.readouterr().err


def test_grpo_group_arithmetic_is_checked_before_the_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text("")
    monkeypatch.setenv("CODESEARCH_VLLM_VENV", str(venv.parent))
    code = main(["train", "grpo", "--model", "m", "--data", "d", "--out", str(tmp_path / "o"),
                 "--batch-size", "3", "--num-generations", "2"])  # fmt: skip
    assert code == 2 and "must be a multiple of --num-generations" in capsys.readouterr().err
