"""Helpers for tests that run the REAL vLLM (CPU build) in its own venv.

Importable from the main test venv: stdlib only (no torch, no vllm, no pytest).
The venv is built by ``bash .ci/vllm_venv.sh``; see README.md beside this file.

Typical use in a test module::

    from tests.vllm_support.env import run_in_vllm_env, skip_reason, tiny_model_dir, vllm_python

    pytestmark = [
        pytest.mark.vllm,
        pytest.mark.skipif(vllm_python() is None, reason=skip_reason()),
    ]

    @pytest.fixture(scope="session")
    def tiny_model(tmp_path_factory):
        return tiny_model_dir(tmp_path_factory)

    def test_x(tiny_model):
        proc = run_in_vllm_env(CODE, env_extra={"TINY_MODEL": str(tiny_model)}, timeout=120)
        assert proc.returncode == 0, proc.stderr[-4000:]
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
VENV_ENV_VAR = "CODESEARCH_VLLM_VENV"
DEFAULT_VENV = Path.home() / ".cache" / "codesearch-gym" / "vllm-venv"
BUILD_SCRIPT = ".ci/vllm_venv.sh"
STAMP_NAME = ".ready"  # written by .ci/vllm_venv.sh as its last step

# Variables of the calling (main) venv that must not leak into the vLLM venv.
_DROP_VARS = ("VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH", "PYTHONSTARTUP", "UV_PROJECT_ENVIRONMENT")


_TMPDIR: list[str] = []


def vllm_tmpdir() -> str:
    """A temporary folder for vLLM's child processes (their TMPDIR), removed when this process
    exits: vLLM leaves a `vllm_dist_<hex>` rendezvous file in the temp folder of every engine
    with workers, and a test session would otherwise leave them in /tmp."""
    if not _TMPDIR:
        _TMPDIR.append(tempfile.mkdtemp(prefix="codesearch-vllm-"))
        atexit.register(shutil.rmtree, _TMPDIR[0], True)
    return _TMPDIR[0]


def vllm_venv_dir() -> Path:
    """Where the vLLM venv lives (honours $CODESEARCH_VLLM_VENV)."""
    raw = os.environ.get(VENV_ENV_VAR, "").strip()
    return Path(raw).expanduser() if raw else DEFAULT_VENV


def vllm_python() -> Path | None:
    """The vLLM venv's python, or None when the venv is missing or unfinished."""
    venv = vllm_venv_dir()
    py = venv / "bin" / "python"
    if (venv / STAMP_NAME).is_file() and py.exists():
        return py
    return None


def skip_reason() -> str:
    """Text for pytest.skip / skipif when the vLLM venv is absent."""
    venv = vllm_venv_dir()
    return f"vLLM CPU venv not built at {venv}: run bash {BUILD_SCRIPT}"


def omp_threads_bind(tensor_parallel_size: int = 1) -> str:
    """VLLM_CPU_OMP_THREADS_BIND value for a TP size.

    tp=1: "auto" (vLLM binds the worker to one core and reserves the rest).
    tp>1: the usable cores split into one '|'-separated group per rank
    ("0|1" on a 2-core machine). With fewer cores than ranks, ranks share.
    """
    if tensor_parallel_size <= 1:
        return "auto"
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if not cpus:
        cpus = list(range(os.cpu_count() or 1))
    if len(cpus) < tensor_parallel_size:
        return "|".join(str(cpus[i % len(cpus)]) for i in range(tensor_parallel_size))
    per = len(cpus) // tensor_parallel_size
    groups = [cpus[i * per : (i + 1) * per] for i in range(tensor_parallel_size)]
    return "|".join(",".join(str(c) for c in g) for g in groups)


def vllm_env(
    *,
    tensor_parallel_size: int = 1,
    in_process: bool = False,
    env_extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment for a child process of the vLLM venv's python.

    * PYTHONPATH = repo root (the repo is not installed in that venv).
    * offline Hugging Face, no usage stats, vLLM forced to its CPU platform,
      VLLM_HOST_IP=127.0.0.1 (internal queues on loopback).
    * VLLM_CPU_KVCACHE_SPACE=1 (GiB): the default (4 GiB) is far more than
      the tiny model needs.
    * VLLM_CPU_OMP_THREADS_BIND per ``omp_threads_bind(tensor_parallel_size)``.
    * ``in_process=True`` sets VLLM_ENABLE_V1_MULTIPROCESSING=0: the engine
      core (and for tp=1 the model) runs in the calling process. Engine start
      ~3 s instead of ~20 s for tp=1; do NOT use it for tp=2 (slower there).
    * VLLM_LOGGING_LEVEL=WARNING unless the caller sets it.
    * TMPDIR = ``vllm_tmpdir()``: vLLM's `vllm_dist_*` files go there, removed at exit.
    ``env_extra`` is applied last and wins.
    """
    env = {k: v for k, v in os.environ.items() if k not in _DROP_VARS}
    env.update(
        {
            "PYTHONPATH": str(REPO_ROOT),
            "PYTHONUNBUFFERED": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "VLLM_TARGET_DEVICE": "cpu",
            "VLLM_NO_USAGE_STATS": "1",
            # keep vLLM's internal message queues on loopback (default: the
            # address of the machine's outward interface)
            "VLLM_HOST_IP": "127.0.0.1",
            "DO_NOT_TRACK": "1",
            "VLLM_CPU_KVCACHE_SPACE": "1",
            "VLLM_CPU_OMP_THREADS_BIND": omp_threads_bind(tensor_parallel_size),
            "TMPDIR": vllm_tmpdir(),
        }
    )
    env.setdefault("VLLM_LOGGING_LEVEL", "WARNING")
    if in_process:
        env["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    if env_extra:
        env.update({k: str(v) for k, v in env_extra.items()})
    return env


def run_in_vllm_env(
    code_or_module_args: str | Sequence[str],
    *,
    timeout: float = 300,
    env_extra: Mapping[str, str] | None = None,
    tensor_parallel_size: int = 1,
    in_process: bool = False,
    check: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run Python in the vLLM venv, cwd = repo root, PYTHONPATH = repo root.

    ``code_or_module_args``: a ``str`` is run as ``python -c CODE``; a
    sequence is passed as the arguments after ``python`` (e.g.
    ``["-m", "tests.vllm_support.tiny_model", dest]`` or ``[script.py, ...]``).

    Note: vLLM's CPU platform forces the 'spawn' start method. Code given via
    ``-c`` is fine; a *script file* that creates an LLM must guard it with
    ``if __name__ == "__main__":`` (spawn re-imports the main module).

    Raises RuntimeError when the venv is missing; subprocess.TimeoutExpired
    on timeout (the child's whole process group is killed first);
    subprocess.CalledProcessError when ``check`` and the exit code != 0.
    """
    py = vllm_python()
    if py is None:
        raise RuntimeError(skip_reason())
    if isinstance(code_or_module_args, str):
        args = [str(py), "-c", code_or_module_args]
    else:
        args = [str(py), *[str(a) for a in code_or_module_args]]
    env = vllm_env(
        tensor_parallel_size=tensor_parallel_size, in_process=in_process, env_extra=env_extra
    )
    # Own process group, so a timeout also ends vLLM's engine/worker children.
    proc = subprocess.Popen(
        args,
        cwd=REPO_ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        raise subprocess.TimeoutExpired(args, timeout, output=out, stderr=err) from None
    finally:
        if proc.poll() is None:  # e.g. KeyboardInterrupt
            _kill_group(proc)
    result = subprocess.CompletedProcess(args, proc.returncode, out, err)
    if check:
        result.check_returncode()
    return result


def _kill_group(proc: subprocess.Popen[Any]) -> None:
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def build_tiny_model(dest: Path, *, timeout: float = 180) -> Path:
    """Build the tiny Qwen2 model into ``dest`` with the vLLM venv's python."""
    dest = Path(dest)
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
    try:
        proc = run_in_vllm_env(["-m", "tests.vllm_support.tiny_model", str(tmp)], timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(
                f"building the tiny model failed (rc={proc.returncode}):\n"
                f"{proc.stdout[-2000:]}\n{proc.stderr[-6000:]}"
            )
        if dest.exists():  # somebody else finished first
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


def _is_built(d: Path) -> bool:
    return (
        (d / "config.json").is_file()
        and (d / "model.safetensors").is_file()
        and (d / "tokenizer_config.json").is_file()
    )


def tiny_model_dir(tmp_path_factory: Any, *, name: str = "vllm-tiny-qwen2") -> Path:
    """Build the tiny model once per pytest session and return its directory.

    Pass pytest's ``tmp_path_factory``; the model goes to
    ``<session basetemp>/<name>`` and later calls reuse it. Wrap it in a
    session-scoped fixture. Raises RuntimeError when the venv is missing.
    """
    dest = Path(tmp_path_factory.getbasetemp()) / name
    if _is_built(dest):
        return dest
    return build_tiny_model(dest)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tests.vllm_support.env`` prints where things are."""
    del argv
    py = vllm_python()
    print(f"venv:   {vllm_venv_dir()}")
    print(f"python: {py if py else 'MISSING - ' + skip_reason()}")
    return 0 if py else 1


if __name__ == "__main__":
    sys.exit(main())
