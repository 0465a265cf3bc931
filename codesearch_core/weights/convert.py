"""Running the GGUF conversion where torch is: the vLLM venv's python, as a subprocess.

The project's own environment has no torch (it stays light); `.ci/vllm_venv.sh` builds the venv
that has torch, transformers and gguf, at CODESEARCH_VLLM_VENV or
~/.cache/codesearch-gym/vllm-venv. `gguf_to_hf.py` is run there by its path, so nothing of the
project is imported in that environment.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Final

from codesearch_core import config
from codesearch_core.errors import ModelError
from codesearch_core.weights.gguf_to_hf import ERROR_MARK, RESULT_MARK

SCRIPT: Final = Path(__file__).with_name("gguf_to_hf.py")
CONVERT_TIMEOUT_S: Final = 1800
#: What `.ci/vllm_venv.sh` writes last: a venv without it is unfinished.
_STAMP: Final = ".ready"
_DROP_VARS: Final = ("VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH", "PYTHONSTARTUP")


def torch_python() -> Path:
    """The venv's python; ModelError saying how to build it when it is missing or unfinished."""
    venv = config.torch_venv()
    python = venv / "bin" / "python"
    if not ((venv / _STAMP).is_file() and python.exists()):
        raise ModelError(
            f"converting a GGUF needs torch, transformers and gguf, which the vLLM venv has, and "
            f"there is none at {venv}: build it with `bash .ci/vllm_venv.sh` (or point "
            "CODESEARCH_VLLM_VENV at one); nothing was added"
        )
    return python


def convert_gguf(gguf: Path, out: Path, *, timeout_s: float = CONVERT_TIMEOUT_S) -> dict[str, Any]:
    """Convert `gguf` into the Hugging Face folder `out` (which exists, empty); what the converter
    reports (architecture, parameters, dtype, versions). ModelError with its reason otherwise."""
    python = torch_python()
    env = {k: v for k, v in os.environ.items() if k not in _DROP_VARS}
    # Everything the conversion needs is in the file: never a download from the Hub.
    env.update(
        {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    )
    try:
        proc = subprocess.run(
            [str(python), str(SCRIPT), str(gguf), str(out)],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ModelError(f"converting {gguf.name} took over {timeout_s:.0f} s: stopped") from None
    lines = proc.stdout.splitlines()
    for line in lines:
        if line.startswith(ERROR_MARK):
            raise ModelError(line.removeprefix(ERROR_MARK) + "; nothing was added")
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise ModelError(
            f"converting {gguf.name} failed (exit {proc.returncode} in {python}): {tail}"
        )
    results = [ln.removeprefix(RESULT_MARK) for ln in lines if ln.startswith(RESULT_MARK)]
    if not results:
        raise ModelError(f"converting {gguf.name}: the converter reported nothing")
    report: dict[str, Any] = json.loads(results[-1])
    return report
