"""The benchmarks still run: a schema or API change that breaks one fails here, at a tiny size
(the figures themselves are measured by running them in full, never in tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_store_benchmark_runs_on_a_tiny_store(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/bench_store.py", "--blueprints", "60", "--proposals", "300",
         "--repeat", "1", "--no-save"],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| next undecided item |" in done.stdout


@pytest.mark.slow
def test_the_seed_calls_benchmark_runs_once() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/bench_seed_calls.py", "--reps", "1", "--no-save"],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| ripgrep_search |" in done.stdout and "| ast_grep_search |" in done.stdout


@pytest.mark.slow
def test_the_long_lines_benchmark_runs_once() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/bench_long_lines.py", "--sizes", "6", "--repeat", "1",
         "--no-save"],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| 6 MB | the corpus |" in done.stdout and "| 6 MB | the file, named |" in done.stdout


@pytest.mark.slow
def test_the_cold_start_benchmark_runs_once() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/bench_cold_start.py", "--repeat", "1", "--no-save"],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| `codesearch --help` |" in done.stdout
