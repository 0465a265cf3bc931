"""Starting vLLM right on the machine: CPU defaults, dtype, and the engine process's own error.

No vLLM needed: these are the decisions; `test_engines_vllm.py` runs them on the real engine.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from codesearch_core.engines.vllm_platform import (
    CPU_KV_CACHE_GIB,
    PlatformDefaults,
    StderrTail,
    load_error_message,
    platform_defaults,
    resolve_dtype,
    root_cause,
    split_cores,
)


def defaults(**overrides: Any) -> PlatformDefaults:
    args: dict[str, Any] = {
        "workers": 2,
        "dtype": "auto",
        "kv_cache_gib": None,
        "on_cpu": True,
        "environ": {},
        "cpus": [0, 1],
        "model_dtype": None,
    }
    args.update(overrides)
    return platform_defaults(**args)


def test_a_cpu_machine_gets_disjoint_cores_per_worker_an_explicit_kv_cache_and_eager() -> None:
    chosen = defaults()
    assert chosen.env == {"VLLM_CPU_OMP_THREADS_BIND": "0|1"}
    assert chosen.kwargs == {
        "kv_cache_memory_bytes": int(CPU_KV_CACHE_GIB * 1024**3),
        # vLLM's CPU build compiles the model at every start (minutes); eager starts in seconds.
        "enforce_eager": True,
    }
    assert len(chosen.notices) == 3
    assert chosen.notices[-1].startswith("CPU: eager mode, no torch.compile: starts in seconds")


def test_what_the_user_set_is_kept() -> None:
    chosen = defaults(
        environ={"VLLM_CPU_OMP_THREADS_BIND": "auto", "VLLM_CPU_KVCACHE_SPACE": "4"},
        enforce_eager=False,  # --no-enforce-eager: compiled, as asked
    )
    assert chosen.env == {} and chosen.kwargs == {} and chosen.notices == ()
    assert "kv_cache_memory_bytes" not in defaults(kv_cache_gib=1.0).kwargs  # VllmSettings' own
    assert "enforce_eager" not in defaults(enforce_eager=True).kwargs  # VllmSettings passes it


def test_one_worker_keeps_vllms_binding_and_a_gpu_gets_nothing() -> None:
    # vLLM's `auto` binding keeps a core back for the scheduler; binding the one worker to both
    # cores measured slower (benchmarks/results/tp1_threads.md), so it is left as vLLM sets it
    one = defaults(workers=1)
    assert "VLLM_CPU_OMP_THREADS_BIND" not in one.env
    assert not [n for n in one.notices if "bound to cores" in n]
    # several workers: this machine's own cores, one list each
    own = defaults(workers=2, cpus=None).env["VLLM_CPU_OMP_THREADS_BIND"]
    assert {int(c) for part in own.split("|") for c in part.split(",")} <= os.sched_getaffinity(0)
    assert defaults(on_cpu=False).env == {}
    assert defaults(on_cpu=False).kwargs == {}  # a GPU compiles (CUDA graphs) unless told


@pytest.mark.parametrize(
    ("cpus", "workers", "bind"),
    [([0, 1], 2, "0|1"), ([0, 1, 2, 3], 2, "0,1|2,3"), ([3], 2, "3|3"), ([0, 1, 2], 2, "0|1")],
)
def test_split_cores(cpus: list[int], workers: int, bind: str) -> None:
    assert split_cores(cpus, workers) == bind


def test_dtype_auto_keeps_the_stored_precision_and_a_lower_one_is_said() -> None:
    assert resolve_dtype("auto", "float32") == ("float32", "")
    assert resolve_dtype("auto", None) == ("auto", "")
    dtype, notice = resolve_dtype("bfloat16", "float32")
    assert dtype == "bfloat16" and "lowers their precision" in notice
    assert resolve_dtype("float32", "bfloat16") == ("float32", "")
    assert defaults(model_dtype="float32").kwargs["dtype"] == "float32"


LOG = [
    "(EngineCore_DP0 pid=7) INFO 11-24 [core.py:90] loading",
    "(EngineCore_DP0 pid=7) ERROR 11-24 [core.py:900] EngineCore failed to start.",
    "(EngineCore_DP0 pid=7) Traceback (most recent call last):",
    "(EngineCore_DP0 pid=7) \x1b[31mValueError: Available memory on node 0 (11.3 GiB) is less "
    "than desired CPU memory utilization (0.9, 20.7 GiB)\x1b[0m",
    "RuntimeError: Engine core initialization failed. See root cause above. Failed core "
    "proc(s): {'EngineCore_DP0': 1}",
]


def test_the_root_cause_is_the_engine_processs_last_error_not_vllms_wrapper() -> None:
    assert root_cause(LOG) == (
        "ValueError: Available memory on node 0 (11.3 GiB) is less than desired CPU memory "
        "utilization (0.9, 20.7 GiB)"
    )
    assert root_cause(["all fine"]) == ""


def test_the_load_error_names_the_cause_and_the_fix() -> None:
    err = RuntimeError("Engine core initialization failed. See root cause above.")
    message = load_error_message("m", 2, err, LOG)
    assert message.startswith("cannot load model 'm' with --tp 2: ValueError: Available memory")
    assert message.endswith("--kv-cache-gib (e.g. 1)")
    assert "usual suspects" in load_error_message("m", 2, RuntimeError("?"), [])


def test_stderr_tail_passes_through_and_keeps_what_child_processes_write() -> None:
    tail = StderrTail()
    with tail:
        subprocess.run(
            [sys.executable, "-c", "import sys; sys.stderr.write('KeyError: from the child\\n')"],
            check=True,
        )
    assert "KeyError: from the child" in tail.lines()
    assert root_cause(tail.lines()) == "KeyError: from the child"
    os.write(2, b"")  # fd 2 is usable again


def test_a_max_model_len_above_the_models_own_says_to_lower_it() -> None:
    err = ValueError(
        "Value error, User-specified max_model_len (4096) is greater than the derived "
        "max_model_len (max_position_embeddings=2048.0 or model_max_length=None in model's "
        "config.json)."
    )
    message = load_error_message("m", 2, err)
    assert message.endswith("give --max-model-len at most the model's own limit (named above)")
