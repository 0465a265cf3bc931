"""`codesearch verify`: the store's pending proposals executed, graded and recorded from the CLI."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from verify_support import invalid_proposal, make_store, seed_proposals

from codesearch_core.cli import main
from codesearch_core.store.core import Store
from tests.ctrl_c_support import ctrl_c_when


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    blueprints, proposals = seed_proposals(mutations_per_blueprint=1)
    path = tmp_path / "studio.duckdb"
    make_store(path, blueprints, [*proposals, invalid_proposal(blueprints[0])]).close()
    return path


def _executed(path: Path) -> tuple[int, int]:
    with Store(path) as store:
        counts = store.counts()
        return counts.executed, counts.proposals


def test_verify_records_every_pending_proposal_and_prints_a_summary(
    store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify", "--db", str(store_path), "--workers", "2"]) == 0
    out, err = capsys.readouterr()
    executed, proposals = _executed(store_path)
    assert executed == proposals
    assert f"verified {proposals} proposals with 2 local worker(s)" in out
    assert "invalid_call 1" in out
    assert "mean F1" in out and "calls/s" in out
    assert "verify" not in err  # no progress line: stderr is not a terminal here


def test_verify_again_finds_nothing_pending(
    store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify", "--db", str(store_path), "--workers", "1"]) == 0
    capsys.readouterr()
    assert main(["verify", "--db", str(store_path)]) == 0
    assert "nothing to verify" in capsys.readouterr().out


def test_limit_stops_after_n(store_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--db", str(store_path), "--workers", "1", "--limit", "5"]) == 0
    assert "verified 5 proposals" in capsys.readouterr().out
    assert _executed(store_path)[0] == 5


def test_a_missing_store_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.duckdb"
    assert main(["verify", "--db", str(missing)]) == 2
    assert "no store at" in capsys.readouterr().err
    assert not missing.exists()  # verify never creates an empty store by mistake


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--workers", "0"), ("--limit", "0"), ("--timeout", "0"), ("--max-findings", "-5")],
)
def test_bad_numbers_are_bad_input(
    store_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str
) -> None:
    assert main(["verify", "--db", str(store_path), flag, value]) == 2
    assert flag in capsys.readouterr().err
    assert _executed(store_path)[0] == 0


def test_the_console_script_runs_verify(store_path: Path) -> None:
    # A real process, as a user runs it: the worker pool must start from the console entry point.
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "codesearch_core",
            "verify",
            "--db",
            str(store_path),
            "--limit",
            "8",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "verified 8 proposals" in done.stdout
    assert _executed(store_path)[0] == 8


@pytest.fixture
def long_run_path(tmp_path: Path) -> Path:
    """A store whose verification takes seconds: the seed proposals over renamed blueprint copies."""
    blueprints, proposals = seed_proposals(mutations_per_blueprint=5)
    all_blueprints, all_proposals = [], []
    for copy in range(3):
        renamed = {
            bp.id: replace(bp, id=f"{bp.id}--{copy}", intent=f"{bp.intent} [{copy}]")
            for bp in blueprints
        }
        all_blueprints += renamed.values()
        all_proposals += [replace(p, blueprint_id=renamed[p.blueprint_id].id) for p in proposals]
    path = tmp_path / "long.duckdb"
    make_store(path, all_blueprints, all_proposals).close()
    return path


@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_exits_130_without_a_traceback_and_keeps_what_was_written(
    long_run_path: Path, workers: str
) -> None:
    command = ["verify", "--workers", workers, "--db", str(long_run_path)]
    # The progress line's first count says a first batch is written: Ctrl-C lands mid-run.
    run = ctrl_c_when(command, rb"verify: +[1-9]")
    text = run.terminal
    assert run.returncode == 130, text
    assert "Traceback" not in text
    written = re.search(r"interrupted: (\d+) results written", text)
    assert written is not None, text
    executed, proposals = _executed(long_run_path)
    assert 0 < executed == int(written.group(1)) < proposals
    with Store(long_run_path) as store:
        assert store.check_caches() == []
    assert main(["verify", "--db", str(long_run_path), "--workers", workers]) == 0
    assert _executed(long_run_path) == (proposals, proposals)


def test_a_missing_tool_stops_verify_before_any_run_and_records_nothing(
    store_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from codesearch_core.tools import binaries

    monkeypatch.setenv("CODESEARCH_AST_GREP", str(tmp_path / "not-installed"))
    binaries.clear_caches()
    try:
        assert main(["verify", "--db", str(store_path), "--workers", "1"]) == 2
    finally:
        monkeypatch.delenv("CODESEARCH_AST_GREP")
        binaries.clear_caches()
    assert "CODESEARCH_AST_GREP=" in capsys.readouterr().err
    assert _executed(store_path)[0] == 0  # no proposal scored for the machine's failure
