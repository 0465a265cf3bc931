"""`server_command`: vLLM's OpenAI server gets the in-process engine's machine defaults as the flags
and variables it reads. The server itself runs in tests/engines/test_engines_vllm.py (vllm-marked);
this checks the command for each machine without starting anything."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from codesearch_core.cli import main
from codesearch_core.engines import server_command
from codesearch_core.errors import EngineError


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """A model directory as the tests' tiny model has it: float32 weights, 2048 positions."""
    (tmp_path / "config.json").write_text(
        json.dumps({"torch_dtype": "float32", "max_position_embeddings": 2048})
    )
    return tmp_path


def _flag(args: tuple[str, ...], name: str) -> str:
    return args[args.index(name) + 1]


def test_a_cpu_server_gets_the_in_process_engines_machine_defaults(model: Path) -> None:
    command = server_command(
        model=str(model), tensor_parallel_size=2, on_cpu=True, environ={}, extra=("--seed", "0")
    )
    args = command.args
    assert args[0] == "vllm.entrypoints.openai.api_server"
    assert _flag(args, "--tensor-parallel-size") == "2"
    # float32 weights stay float32 (vLLM's CPU build would run them as bfloat16)
    assert _flag(args, "--dtype") == "float32"
    assert _flag(args, "--max-model-len") == "2048"  # the model's own limit, not 4096
    # one core list per worker, and a KV cache the machine has: without them it does not start
    assert set(command.env) == {"VLLM_CPU_OMP_THREADS_BIND", "VLLM_CPU_KVCACHE_SPACE"}
    assert command.env["VLLM_CPU_OMP_THREADS_BIND"].count("|") == 1  # "0|1" on 2 cores
    assert command.env["VLLM_CPU_KVCACHE_SPACE"] == "2"
    # the README's tool-call flags for --engine openai
    assert _flag(args, "--tool-call-parser") == "hermes" and "--enable-auto-tool-choice" in args
    config = json.loads(_flag(args, "--structured-outputs-config"))
    assert config == {"backend": "xgrammar", "disable_any_whitespace": True}
    assert _flag(args, "--shutdown-timeout") == "15"
    assert args[-2:] == ("--seed", "0")
    assert any("KV cache 2 GiB" in n for n in command.notices)
    # eager: the CPU build would compile the model at every start (minutes)
    assert "--enforce-eager" in args and any("eager mode" in n for n in command.notices)
    compiled = server_command(model=str(model), tensor_parallel_size=2, on_cpu=True, environ={},
                              enforce_eager=False)  # fmt: skip
    assert "--enforce-eager" not in compiled.args


def test_what_the_user_set_is_kept_and_a_gpu_gets_no_cpu_variables(model: Path) -> None:
    mine = {"VLLM_CPU_OMP_THREADS_BIND": "0", "VLLM_CPU_KVCACHE_SPACE": "1"}
    command = server_command(model=str(model), tensor_parallel_size=2, on_cpu=True, environ=mine)
    assert command.env == {}
    gpu = server_command(
        model=str(model), tensor_parallel_size=1, on_cpu=False, kv_cache_gib=4, environ={},
        tool_format="json", compact_json=False,
    )  # fmt: skip
    assert gpu.env == {} and "--enforce-eager" not in gpu.args
    assert _flag(gpu.args, "--kv-cache-memory-bytes") == str(4 * 1024**3)
    # a format without a server parser gets none; no compact JSON asked, none set
    assert "--tool-call-parser" not in gpu.args
    assert "--structured-outputs-config" not in gpu.args


def test_bad_input_is_a_clear_error(tmp_path: Path, model: Path) -> None:
    with pytest.raises(EngineError, match=r"has no config\.json"):
        server_command(model=str(tmp_path / "none"), tensor_parallel_size=1, on_cpu=True)
    with pytest.raises(EngineError, match="--tp must be at least 1"):
        server_command(model=str(model), tensor_parallel_size=0, on_cpu=True)


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_serve_model_without_vllm_says_which_python_to_use(
    model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve-model", "--model", str(model), "--dry-run"]) == 2
    assert "vLLM is not installed for this python" in capsys.readouterr().err
