"""Rollouts as Ray tasks on a real local Ray store what the local run stores; a bad address or
`--engine vllm --ray` is a clear error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codesearch_core.cli import main
from codesearch_core.store import Store

ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install '.[ray]'")
pytestmark = pytest.mark.slow  # starting Ray takes ~10 s on a quiet 2-core machine

REPO = Path(__file__).resolve().parents[2]
#: A few seeds of the fixture corpora, plan (multi-turn) ones among them.
TASKS = ["--blueprints", "tag:plan"]


def _episodes(db: Path) -> dict[str, tuple[float, list[list[tuple[str, str]]], Any]]:
    """Each stored episode's reward, call sequence (name and arguments, turn by turn) and submit."""
    with Store(db) as store:
        return {
            e.blueprint_id: (
                e.reward,
                [
                    [(o["name"], repr(o["arguments"])) for o in turn]
                    for turn in e.trajectory["turns"]
                ],
                e.trajectory.get("submit"),
            )
            for e in store.episodes.list()
        }


def test_reference_rollouts_on_ray_store_the_local_episodes(
    local_ray: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    local, on_ray = tmp_path / "local.duckdb", tmp_path / "ray.duckdb"
    args = ["rollouts", "--engine", "reference", "--k", "1", *TASKS]
    assert main([*args, "--db", str(local)]) == 0
    assert main([*args, "--db", str(on_ray), "--ray"]) == 0
    assert "as Ray tasks" in capsys.readouterr().err
    want = _episodes(local)
    assert want and _episodes(on_ray) == want
    assert main([*args, "--db", str(on_ray), "--ray", "--json"]) == 0  # a second run skips all
    assert '"skipped_stored": ' + str(len(want)) in capsys.readouterr().out
    assert local_ray.is_initialized()  # the test's connection, not the command's: left open


def test_a_bad_ray_address_is_a_clear_error(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    done = subprocess.run(
        [sys.executable, "-m", "codesearch_core", "rollouts", "--engine", "reference", *TASKS,
         "--db", str(db), "--ray", "127.0.0.1:1"],
        cwd=REPO, env={**os.environ, "RAY_ADDRESS": ""}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "cannot connect to Ray at 127.0.0.1:1: nothing answers" in done.stderr
    assert "Traceback" not in done.stderr


def test_vllm_on_ray_is_refused_before_anything_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.duckdb"
    assert main(["rollouts", "--engine", "vllm", "--model", "m", "--db", str(db), "--ray"]) == 2
    assert "--engine vllm does not run on --ray" in capsys.readouterr().err
    assert not db.exists()
