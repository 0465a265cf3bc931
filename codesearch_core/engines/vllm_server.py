"""vLLM's OpenAI-compatible server, started with the machine defaults the in-process engine uses.

`python -m vllm.entrypoints.openai.api_server` with vLLM's own defaults does not start on a CPU
machine for `--tensor-parallel-size 2` (its `auto` thread binding wants a NUMA node per worker, and
its KV-cache check wants 90% of the node's memory free), and runs float32 weights as bfloat16.
`server_command` gives it what `vllm_platform.platform_defaults` gives `vllm.LLM`, as the
environment variables and flags the server reads, and the flags the README recommends for tool
calls: the tool format's `--tool-call-parser`, compact JSON from xgrammar, and a shutdown grace
period (vLLM's default, 0, aborts the engine on SIGTERM and leaks its shared memory).
`codesearch serve-model` runs it and stays its supervisor (`stopping.run_supervised`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from codesearch_core.engines.tool_format import get_tool_format
from codesearch_core.engines.vllm_context import default_max_model_len
from codesearch_core.engines.vllm_platform import (
    CPU_KV_CACHE_GIB,
    check_model_exists,
    platform_defaults,
    stored_dtype,
)
from codesearch_core.errors import EngineError

SERVER_MODULE: Final = "vllm.entrypoints.openai.api_server"
#: Seconds the server gives its engine to finish on SIGTERM before stopping it.
SHUTDOWN_GRACE_S: Final = 15


@dataclass(frozen=True, slots=True)
class ServerCommand:
    """The server's arguments (after `python -m`), the environment variables to add, notices."""

    args: tuple[str, ...]
    env: dict[str, str]
    notices: tuple[str, ...]


def server_command(
    *,
    model: str,
    tensor_parallel_size: int,
    on_cpu: bool,
    dtype: str = "auto",
    max_model_len: int | None = None,
    kv_cache_gib: float | None = None,
    tool_format: str = "hermes",
    compact_json: bool = True,
    enforce_eager: bool | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    extra: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
) -> ServerCommand:
    """`python -m` arguments and environment for the server; `extra` is appended as given."""
    environ = os.environ if environ is None else environ
    if tensor_parallel_size < 1:
        raise EngineError(f"--tp must be at least 1, got {tensor_parallel_size}")
    if kv_cache_gib is not None and kv_cache_gib <= 0:
        raise EngineError(f"--kv-cache-gib must be positive, got {kv_cache_gib}")
    check_model_exists(model)
    fmt = get_tool_format(tool_format)
    defaults = platform_defaults(
        workers=tensor_parallel_size,
        dtype=dtype,
        kv_cache_gib=kv_cache_gib,
        on_cpu=on_cpu,
        environ=dict(environ),
        model_dtype=stored_dtype(model),
        enforce_eager=enforce_eager,
    )
    env = dict(defaults.env)
    notices = list(defaults.notices)
    args = [SERVER_MODULE, "--model", model, "--host", host, "--port", str(port)]
    args += ["--tensor-parallel-size", str(tensor_parallel_size)]
    args += ["--dtype", str(defaults.kwargs.get("dtype", dtype))]
    if max_model_len is None:
        max_model_len, notice = default_max_model_len(model)
        notices += [notice] if notice else []
    args += ["--max-model-len", str(max_model_len)]
    if defaults.kwargs.get("enforce_eager", enforce_eager):
        args += ["--enforce-eager"]
    if on_cpu:
        # The server takes the CPU KV cache from this variable (whole GiB), not from a flag.
        if "VLLM_CPU_KVCACHE_SPACE" not in environ:
            env["VLLM_CPU_KVCACHE_SPACE"] = str(max(1, round(kv_cache_gib or CPU_KV_CACHE_GIB)))
    elif kv_cache_gib is not None:
        args += ["--kv-cache-memory-bytes", str(int(kv_cache_gib * 1024**3))]
    if fmt.vllm_parser:
        args += ["--enable-auto-tool-choice", "--tool-call-parser", fmt.vllm_parser]
    if compact_json:
        # Compact JSON needs an explicit backend; xgrammar also takes the formats' structural tags.
        config = {"backend": "xgrammar", "disable_any_whitespace": True}
        args += ["--structured-outputs-config", json.dumps(config)]
    args += ["--shutdown-timeout", str(SHUTDOWN_GRACE_S)]
    args += list(extra)
    return ServerCommand(tuple(args), env, tuple(notices))
