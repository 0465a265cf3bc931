"""Starting vLLM right on this machine: CPU defaults, dtype, and the real cause of a failed start.

vLLM's CPU build binds each worker's threads to a NUMA node (a one-node machine has too few for
tp=2; for tp=1 it keeps a core back, one thread on 2 cores) and checks the KV cache against 90% of the node's memory (a shared machine rarely has it
free). Where the user has not set them, `platform_defaults` gives the worker threads disjoint
cores and the KV cache an explicit size, which vLLM then takes instead of the check. It also runs
the model eager: vLLM's CPU build otherwise compiles it with torch.compile (inductor) at every
start, 237 to 521 s on 2 cores for a 135M model where eager starts in 4 s, for a speed-up that a
few hundred proposals never earn back; `enforce_eager=False` (`--no-enforce-eager`) compiles.

Before loading, `check_model_exists` and `check_gpu_count` refuse a missing model directory or
more GPUs than are visible, saying how to fix it.

When loading fails, the cause is in the engine process's log, not in the exception vLLM raises
("Engine core initialization failed. See root cause above"): `StderrTail` keeps that log while
passing it through, and `load_error_message` quotes its last error line with a hint.

How a command that runs vLLM stops on a signal, at any moment: `stopping.py`.
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from codesearch_core.engines.vllm_context import read_model_json
from codesearch_core.errors import EngineError

#: The KV cache given on a CPU machine when the user sets none: room for a few 8k-token
#: sequences of a small model, and far below what vLLM's 90%-of-the-node check asks for.
CPU_KV_CACHE_GIB: Final = 2.0
_PRECISION: Final = {"float32": 32, "float": 32, "bfloat16": 16, "float16": 16, "half": 16}


@dataclass(frozen=True, slots=True)
class PlatformDefaults:
    """What `platform_defaults` chose: environment variables, `LLM` arguments, and notices."""

    env: dict[str, str]
    kwargs: dict[str, Any]
    notices: tuple[str, ...]


def platform_defaults(
    *,
    workers: int,
    dtype: str,
    kv_cache_gib: float | None,
    on_cpu: bool,
    environ: dict[str, str] | os._Environ[str] | None = None,
    cpus: Sequence[int] | None = None,
    model_dtype: str | None = None,
    enforce_eager: bool | None = None,
) -> PlatformDefaults:
    """Working defaults for this machine; nothing the user set is overridden.

    CPU: worker threads on disjoint cores (vLLM's `auto` binding wants a NUMA node per worker,
    and for one worker keeps a core back for the scheduler: one thread on 2 cores), and an explicit KV cache, which also skips vLLM's
    check that 90% of the node's memory is free. Any machine: `dtype="auto"` becomes the dtype
    the weights are stored in (vLLM's CPU build would run float32 weights as bfloat16), and a
    dtype that lowers the weights' precision is said in a notice. `enforce_eager=None` on a CPU:
    eager (module docstring); what the user set is kept.
    """
    environ = os.environ if environ is None else environ
    env: dict[str, str] = {}
    kwargs: dict[str, Any] = {}
    notices: list[str] = []
    if on_cpu:
        if "VLLM_CPU_OMP_THREADS_BIND" not in environ and workers > 1:
            # Several workers: one core list each. One worker keeps vLLM's own `auto` binding,
            # which holds a core back for the engine core's scheduler: on 2 cores that is one
            # torch thread, and giving the worker both cores measured 7-10% slower over the 116
            # seeds (benchmarks/results/tp1_threads.md), the scheduler's core being busy after all.
            chosen = cpus or _usable_cpus()
            env["VLLM_CPU_OMP_THREADS_BIND"] = split_cores(chosen, workers)
            notices.append(
                f"CPU: {workers} worker{'s' if workers > 1 else ''} bound to cores "
                f"{env['VLLM_CPU_OMP_THREADS_BIND']} "
                "(VLLM_CPU_OMP_THREADS_BIND)"
            )
        if kv_cache_gib is None and "VLLM_CPU_KVCACHE_SPACE" not in environ:
            kwargs["kv_cache_memory_bytes"] = int(CPU_KV_CACHE_GIB * 1024**3)
            notices.append(f"CPU: KV cache {CPU_KV_CACHE_GIB:g} GiB (--kv-cache-gib to change)")
        if enforce_eager is None:
            kwargs["enforce_eager"] = True
            notices.append(
                "CPU: eager mode, no torch.compile: starts in seconds (--no-enforce-eager "
                "compiles the model, minutes at every start)"
            )
    resolved, notice = resolve_dtype(dtype, model_dtype)
    if resolved != dtype:
        kwargs["dtype"] = resolved
    if notice:
        notices.append(notice)
    return PlatformDefaults(env, kwargs, tuple(notices))


def split_cores(cpus: Sequence[int], workers: int) -> str:
    """`VLLM_CPU_OMP_THREADS_BIND` for `workers` ranks: one `|`-separated core list per rank."""
    cpus = sorted(cpus) or [0]
    if len(cpus) < workers:  # fewer cores than ranks: ranks share, round robin
        return "|".join(str(cpus[i % len(cpus)]) for i in range(workers))
    per = len(cpus) // workers
    groups = [cpus[i * per : (i + 1) * per] for i in range(workers)]
    return "|".join(",".join(str(c) for c in group) for group in groups)


def resolve_dtype(requested: str, stored: str | None) -> tuple[str, str]:
    """The dtype to load with, and a notice when it changes the stored weights' precision."""
    if stored is None:
        return requested, ""
    if requested == "auto":
        return stored, ""
    if _PRECISION.get(requested, 32) < _PRECISION.get(stored, 32):
        return requested, (
            f"dtype {requested}: the weights are stored as {stored}; running them in "
            f"{requested} lowers their precision"
        )
    return requested, ""


def stored_dtype(model: str) -> str | None:
    """The dtype in a local model directory's config.json (None for a hub id or no entry)."""
    data = read_model_json(model, "config.json") or {}
    value = data.get("torch_dtype") or data.get("dtype")
    return value if isinstance(value, str) and value in _PRECISION else None


def check_gpu_count(tensor_parallel_size: int, pipeline_parallel_size: int, visible: int) -> None:
    """Refuse a parallel layout that needs more GPUs than are visible, saying how to fix it."""
    needed = tensor_parallel_size * pipeline_parallel_size
    if needed <= visible:
        return
    layout = f"tensor_parallel_size={tensor_parallel_size}"
    if pipeline_parallel_size > 1:
        layout += f" x pipeline_parallel_size={pipeline_parallel_size}"
    verb = "is" if visible == 1 else "are"
    hint = f"set --tp {max(visible, 1)}" if pipeline_parallel_size == 1 else "lower --tp or --pp"
    raise EngineError(
        f"{layout} needs {needed} GPUs but {visible} {verb} visible: {hint} "
        f"(or CUDA_VISIBLE_DEVICES)"
    )


def check_model_exists(model: str) -> None:
    """A model given as a local path must be a model directory; HF ids are left to vLLM."""
    looks_local = model.startswith(("/", ".", "~"))
    path = Path(model).expanduser()
    if (looks_local or path.exists()) and not (path / "config.json").is_file():
        raise EngineError(
            f"model directory {model!r} has no config.json: give a Hugging Face model id "
            "or a directory holding a downloaded model"
        )


def _usable_cpus() -> list[int]:
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


class StderrTail:
    """Copies everything written to file descriptor 2 (by this process and the engine processes
    it starts, which inherit it) through to the real stderr, keeping the last lines.

    vLLM's engine process logs the real reason it failed and then the parent raises a generic
    "Engine core initialization failed. See root cause above". The copy runs as long as anything
    holds the pipe: the engine processes keep logging through it after loading.
    """

    def __init__(self, keep: int = 400) -> None:
        self._lines: collections.deque[str] = collections.deque(maxlen=keep)
        self._saved: int | None = None

    def __enter__(self) -> StderrTail:
        try:
            read_fd, write_fd = os.pipe()
            saved = os.dup(2)
        except OSError:  # no fd 2 (a daemon): nothing to copy, nothing to keep
            return self
        self._saved = saved
        threading.Thread(target=self._copy, args=(read_fd, saved), daemon=True).start()
        os.dup2(write_fd, 2)
        os.close(write_fd)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._saved is None:
            return
        sys.stderr.flush()
        # fd 2 of this process writes to the terminal again; the engine processes keep the pipe.
        os.dup2(self._saved, 2)

    def _copy(self, read_fd: int, out_fd: int) -> None:
        pending = b""
        with os.fdopen(read_fd, "rb", buffering=0) as pipe:
            while chunk := pipe.read(65536):
                with contextlib.suppress(OSError):  # a closed terminal must not stop the copy
                    os.write(out_fd, chunk)
                pending += chunk
                *complete, pending = pending.split(b"\n")
                self._lines.extend(line.decode("utf-8", "replace") for line in complete)
                pending = pending[-4096:]

    def lines(self) -> list[str]:
        time.sleep(0.2)  # the engine process's last words may still be in the pipe
        return list(self._lines)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_ERROR_LINE = re.compile(r"\b((?:[A-Za-z_][\w.]*)?(?:Error|Exception|AssertionError)): (.+)$")
_WRAPPERS: Final = ("Engine core initialization failed", "EngineCore failed to start")


def root_cause(lines: Sequence[str]) -> str:
    """The last error line of an engine process's log that is not vLLM's own wrapper."""
    for raw in reversed(lines):
        line = _ANSI.sub("", raw).strip()
        match = _ERROR_LINE.search(line)
        if match and not any(w in match.group(2) for w in _WRAPPERS):
            return f"{match.group(1)}: {match.group(2)}"
    return ""


def load_error_message(
    model: str, tensor_parallel_size: int, err: Exception, log_lines: Sequence[str] = ()
) -> str:
    text = f"{type(err).__name__}: {err}"
    cause = root_cause(log_lines)
    if cause and cause not in text:
        text = f"{cause} (in the engine process; vLLM then raised {type(err).__name__})"
    lowered = text.lower()
    if "numa" in lowered or "threads_bind" in lowered or "omp" in lowered:
        hint = "set VLLM_CPU_OMP_THREADS_BIND to one core list per worker, e.g. '0|1' for --tp 2"
    elif "max_model_len" in lowered and "derived" in lowered:
        hint = "give --max-model-len at most the model's own limit (named above)"
    elif "available memory" in lowered or "cpu memory utilization" in lowered:
        hint = "give the KV cache an explicit size with --kv-cache-gib (e.g. 1)"
    elif "out of memory" in lowered or "kv cache" in lowered or "memory" in lowered:
        hint = (
            "lower --max-model-len or raise gpu_memory_utilization, or spread the model over "
            "more GPUs with --tp"
        )
    elif "repository not found" in lowered or "does not appear to have" in lowered:
        hint = "check the model id (or download the model and give its directory)"
    elif "divisible" in lowered or "attention heads" in lowered:
        hint = "the model's head count must divide by --tp: choose another --tp"
    elif cause:
        hint = "that is the engine process's own error"
    else:
        hint = "the engine process's log is above; --tp, --max-model-len and --model are the usual suspects"
    return f"cannot load model {model!r} with --tp {tensor_parallel_size}: {text}: {hint}"
