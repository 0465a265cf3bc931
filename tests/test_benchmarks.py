"""The benchmarks still run: a schema or API change that breaks one fails here, at a tiny size
(the figures themselves are measured by running them in full, never in tests)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from browser_support import CHROMIUM

REPO = Path(__file__).resolve().parents[1]


def run_benchmark(script: str, *args: str) -> str:
    """The benchmark's output, once it has run with `args` (and `--no-save`) and exited 0."""
    done = subprocess.run(
        [sys.executable, f"benchmarks/{script}", *args, "--no-save"],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow
def test_the_store_benchmark_runs_on_a_tiny_store() -> None:
    out = run_benchmark(
        "bench_store.py", "--blueprints", "60", "--proposals", "300", "--repeat", "1"
    )
    assert "| next undecided item |" in out


@pytest.mark.slow
def test_the_seed_calls_benchmark_runs_once() -> None:
    out = run_benchmark("bench_seed_calls.py", "--reps", "1")
    assert "| ripgrep_search |" in out and "| ast_grep_search |" in out


@pytest.mark.slow
def test_the_long_lines_benchmark_runs_once() -> None:
    out = run_benchmark("bench_long_lines.py", "--sizes", "6", "--repeat", "1")
    assert "| 6 MB | the corpus |" in out and "| 6 MB | the file, named |" in out


@pytest.mark.slow
def test_the_cold_start_benchmark_runs_once() -> None:
    out = run_benchmark("bench_cold_start.py", "--repeat", "1")
    assert "| `codesearch --help` |" in out


@pytest.mark.slow
def test_the_corpus_page_benchmark_runs_once_on_a_small_folder() -> None:
    out = run_benchmark(
        "bench_corpus_page.py", "--reps", "1", "--source", str(REPO / "data/corpora/webshop")
    )
    assert "| Corpus page, rerun (median) |" in out and "| rg: a rare identifier |" in out


@pytest.mark.slow
def test_the_synthesize_benchmark_runs_on_one_corpus() -> None:
    out = run_benchmark("bench_synthesize.py", "--corpora", "telemetry")
    assert "| telemetry |" in out and "drafts/min" in out


@pytest.mark.slow
def test_the_reward_benchmark_runs_on_a_few_blueprints() -> None:
    out = run_benchmark("bench_reward.py", "--reps", "1", "--limit", "6", "--generations", "4")
    # Each workload with the reward's own pool and with one thread per CPU.
    assert len(re.findall(r"^\| (distinct|grpo), \d+ threads \|", out, re.MULTILINE)) == 4
    assert "completions/s" in out and "CPU ms per completion" in out


@pytest.mark.slow
def test_the_gym_benchmark_runs_once() -> None:
    out = run_benchmark("bench_gym.py", "--reps", "1", "--rounds", "1")
    assert "| shipped corpora |" in out and "median ratio" in out


@pytest.mark.slow
def test_the_gym_server_benchmark_runs_on_a_few_blueprints() -> None:
    out = run_benchmark(
        "bench_gym_server.py", "--reps", "1", "--limit", "3", "--sessions", "4", "--steps", "1",
        "--rounds", "1",
    )  # fmt: skip
    assert "| the reference call (one search) | 3 |" in out
    assert "| no search (an unknown tool) | 3 |" in out
    assert "| plain HTTP session: no search (an unknown tool) | 3 |" in out
    assert "| plain HTTP (bare HTTP/1.1) | no search | 4 | 4 |" in out
    assert "| 4 sessions, no search |" in out


@pytest.mark.slow
def test_the_trajectory_view_benchmark_runs() -> None:
    out = run_benchmark("bench_trajectory.py", "--reps", "1")
    assert "| build and draw it (`pages/_trajectory.show` in AppTest) |" in out


@pytest.mark.slow
def test_the_dataset_benchmark_runs_on_the_small_recipe() -> None:
    out = run_benchmark("bench_dataset.py", "--recipe", "tests/dataset/small.toml")
    assert "| synthesize |" in out and "| webshop |" in out


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium")
def test_the_episode_card_benchmark_runs_on_a_small_store() -> None:
    out = run_benchmark("bench_episode_card.py", "--episodes", "200", "--presses", "3")
    assert "| key press to next episode card, Chromium |" in out
    assert "| store calls of one decision, no Streamlit (baseline) |" in out


@pytest.mark.slow
def test_the_comparing_run_prints_a_figure_beside_its_goal_and_last_value() -> None:
    # Exit 1 flags a figure more than 20% worse, which a loaded machine may well make: the run
    # itself must finish and print the row, the figures are not judged here.
    done = subprocess.run(
        [sys.executable, "benchmarks/run_all.py", "--only", "cold_start", "--no-save"],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-3000:]
    row = re.search(r"^\| `codesearch --help`, median \| <= 0\.3 s \| ([\d.]+) s \| ([\d.]+) s \|",
                    done.stdout, re.MULTILINE)  # fmt: skip
    assert row is not None, done.stdout[-2000:]


@pytest.mark.slow
def test_the_mcp_benchmark_runs_on_one_seed() -> None:
    out = run_benchmark("bench_mcp.py", "--tasks", "1", "--reps", "2")
    assert "| the reference call (one search) | 2 |" in out
    assert "| no search (an unknown tool) | 2 |" in out
