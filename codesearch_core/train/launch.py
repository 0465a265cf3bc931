"""Where a run trains: the python that has torch and TRL. The studio's venv has neither (and
must not: torch is gigabytes), so `codesearch train` builds its rows here and starts the worker
(`python -m codesearch_core.train.worker SPEC`) with the torch venv's python, the one
`.ci/vllm_venv.sh` builds (`$CODESEARCH_VLLM_VENV`, default `~/.cache/codesearch-gym/vllm-venv`),
or with this python when it has both. One command either way, so nobody has to remember which
python a mode needs.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Final

from codesearch_core import config
from codesearch_core.errors import EnvironmentFault

WORKER: Final = "codesearch_core.train.worker"
EXIT_INTERRUPTED: Final = 130
#: The repository root: the torch venv does not install the project, it imports it from here.
REPO_ROOT: Final = Path(__file__).resolve().parents[2]
_DROP_VARS: Final = ("VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH", "UV_PROJECT_ENVIRONMENT")


def _has_trainer_here() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("torch", "trl"))


def torch_python() -> Path:
    """This python when it has torch and TRL, else the torch venv's; missing, a clear error."""
    if _has_trainer_here():
        return Path(sys.executable)
    python = config.torch_venv() / "bin" / "python"
    if not python.is_file():
        raise EnvironmentFault(
            f"training needs torch and TRL, which this python does not have, and there is no "
            f"torch venv at {config.torch_venv()}: build it with `bash .ci/vllm_venv.sh` (CPU) or point "
            f"$CODESEARCH_VLLM_VENV at a venv with torch and trl 1.16"
        )
    return python


def worker_env(python: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROP_VARS}
    env["PYTHONPATH"] = str(REPO_ROOT)
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    # The venv's own rg and ast-grep first (RFT and GRPO run the tools), then what was on PATH.
    env["PATH"] = os.pathsep.join([str(python.parent), env.get("PATH", "")])
    return env


def run_worker(spec_path: Path, python: Path | None = None) -> int:
    """Run the worker on `spec_path` and wait. On Ctrl-C the worker removes its partial output
    and exits 130; this side waits for that, then returns 130."""
    python = python or torch_python()
    proc = subprocess.Popen(
        [str(python), "-m", WORKER, str(spec_path)], cwd=REPO_ROOT, env=worker_env(python)
    )
    # A SIGTERM to this process (a service stopping the job) is passed on: the worker cleans up
    # as on Ctrl-C and its exit status is this command's.
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: proc.send_signal(signum))
    try:
        return proc.wait()
    except KeyboardInterrupt:
        # A terminal's Ctrl-C reaches the worker too; a SIGINT sent to this process alone does
        # not, so pass it on (the worker ignores a second one while it cleans up).
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except (subprocess.TimeoutExpired, KeyboardInterrupt):
            proc.kill()
            proc.wait()
        return EXIT_INTERRUPTED
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
