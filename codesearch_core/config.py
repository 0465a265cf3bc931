"""Where the studio finds its data, with environment overrides.

Defaults are the embedded set-up a new user gets from a fresh clone: the shipped corpora and seeds
under `data/`, and a DuckDB file beside them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from codesearch_core.errors import CodesearchError

REPO_ROOT = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    return Path(os.environ.get("CODESEARCH_DATA", REPO_ROOT / "data"))


def corpora_dir() -> Path:
    return Path(os.environ.get("CODESEARCH_CORPORA", data_dir() / "corpora"))


def torch_venv() -> Path:
    """The venv that has torch (and vLLM, TRL, gguf): the one `.ci/vllm_venv.sh` builds, kept
    apart from the app's so the app never gets a CUDA torch. CODESEARCH_VLLM_VENV moves it.
    Converting a model (`weights`) and training (`train`) run their work there."""
    raw = os.environ.get("CODESEARCH_VLLM_VENV", "").strip()
    return (
        Path(raw).expanduser() if raw else Path.home() / ".cache" / "codesearch-gym" / "vllm-venv"
    )


def models_dir() -> Path:
    """Where added models' weights live: a cache beside the vLLM venv, not the repo (hundreds of
    MB each, fetched again from their pinned source on a new machine). CODESEARCH_MODELS moves it."""
    default = Path.home() / ".cache" / "codesearch-gym" / "models"
    return Path(os.environ.get("CODESEARCH_MODELS", default))


def model_pins_file() -> Path:
    """The committed pins of the models (name -> source and sha256s); CODESEARCH_MODEL_PINS moves it."""
    return Path(os.environ.get("CODESEARCH_MODEL_PINS", data_dir() / "models.json"))


def seeds_file() -> Path:
    return data_dir() / "seeds" / "blueprints.jsonl"


def db_path() -> Path:
    return Path(os.environ.get("CODESEARCH_DB", data_dir() / "studio.duckdb"))


def exports_dir() -> Path:
    """Where the app writes exports; it writes nowhere else (set CODESEARCH_EXPORTS to move it)."""
    return Path(os.environ.get("CODESEARCH_EXPORTS", data_dir() / "exports"))


def lock_wait_s(default: float = 15.0) -> float:
    """Seconds a command waits for a store file another process holds (CODESEARCH_LOCK_WAIT)."""
    raw = os.environ.get("CODESEARCH_LOCK_WAIT", "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise CodesearchError(
            f"CODESEARCH_LOCK_WAIT={raw!r} is not a number of seconds (e.g. 15)"
        ) from None
    if not 0 <= value <= 3600:
        raise CodesearchError(f"CODESEARCH_LOCK_WAIT={raw!r} must be between 0 and 3600 seconds")
    return value


#: Proposals a verify run takes from the store per query (the workers' queue is refilled by it).
VERIFY_BATCH_SIZE: Final = 256


def usable_cores() -> int:
    """The cores this process may run on (a container's or taskset's limit, not the machine's)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1
