"""Rollouts: K episodes per task, the good ones kept once each, with provenance; a second run goes on
where the first stopped; a stop keeps whole tasks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from codesearch_core.cli import main
from codesearch_core.gym import ReferencePolicy, ReplayPolicy, Task, play, read_recorded
from codesearch_core.gym.rollout import choose, rollouts
from codesearch_core.store import Store

REPO = Path(__file__).resolve().parents[2]


def test_reference_rollouts_keep_one_episode_per_task_with_provenance(
    seed_tasks: dict[str, Task], tmp_path: Path
) -> None:
    tasks = [t for t in seed_tasks.values() if "plan" in t.blueprint.tags][:3]
    with Store(tmp_path / "s.duckdb") as store:
        report = rollouts(ReferencePolicy(), tasks, store, k=3)
        stored = store.episodes.list()
        assert (report.episodes, report.kept, report.duplicates) == (
            9,
            3,
            6,
        )  # the same calls thrice
        assert {e.blueprint_id for e in stored} == {t.blueprint.id for t in tasks}
        e = stored[0]
        assert e.engine == "reference" and e.reward >= 0.9 and e.end_reason == "submitted"
        assert e.snapshot and set(e.tool_versions) == {"rg", "ast-grep"}
        assert e.settings["max_turns"] == 4 and e.trajectory["submit"]
        assert store.counts().episodes == 3
        again = rollouts(ReferencePolicy(), tasks, store, k=3)
        assert (again.skipped_stored, again.episodes, again.kept) == (3, 0, 0)


def test_episodes_below_the_minimum_reward_are_not_kept(single_task: Task, tmp_path: Path) -> None:
    bp = single_task.blueprint
    path = tmp_path / "ep.jsonl"
    path.write_text(
        json.dumps({"blueprint_id": bp.id, "turns": [[bp.reference_call.to_dict()]], "submit": []})
        + "\n"
    )
    with Store(tmp_path / "s.duckdb") as store:
        report = rollouts(ReplayPolicy(list(read_recorded(path))), [single_task], store, k=2)
        assert (report.kept, report.below_min_reward, report.unsolved) == (0, 2, [bp.id])
        assert store.episodes.list() == []


def test_choose_prefers_fewer_turns_and_calls_among_equal_rewards(
    single_task: Task, tmp_path: Path
) -> None:
    bp = single_task.blueprint
    submit = [s.to_dict() for s in bp.expected]
    lines = [
        {
            "blueprint_id": bp.id,
            "turns": [[bp.reference_call.to_dict()], [bp.reference_call.to_dict()]],
            "submit": submit,
        },
        {"blueprint_id": bp.id, "turns": [[bp.reference_call.to_dict()]], "submit": submit},
    ]
    results = [
        play(ReplayPolicy(list(read_recorded(_write(tmp_path / f"{i}.jsonl", x)))), single_task)
        for i, x in enumerate(lines)
    ]
    kept, below, duplicates = choose(results, 0.9)
    assert (below, duplicates) == (0, 0)
    assert [len(r.turns) for r in kept] == [2, 3]  # one search turn + submit first


def _write(path: Path, line: dict[str, object]) -> Path:
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return path


def test_a_stop_keeps_whole_tasks_and_says_so(seed_tasks: dict[str, Task], tmp_path: Path) -> None:
    stop = threading.Event()
    stop.set()  # asked before the first task finished: the tasks already playing still finish
    tasks = list(seed_tasks.values())
    with Store(tmp_path / "s.duckdb") as store:
        report = rollouts(ReferencePolicy(), tasks, store, k=1, stop=stop, workers=2)
        assert report.stopped
        assert report.kept == len(store.episodes.list()) < len(tasks)


def test_rollouts_cli_reports_and_db_stats_counts_episodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "s.duckdb")
    assert (
        main(
            ["rollouts", "--engine", "reference", "--blueprints", "tag:plan", "--json", "--db", db]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["kept"] == report["tasks"] > 0
    assert main(["db", "stats", "--db", db]) == 0
    assert f"episodes         {report['kept']}" in capsys.readouterr().out
    assert main(["rollouts", "--engine", "reference", "--k", "0", "--db", db]) == 2
    assert "--k must be 1 to 64" in capsys.readouterr().err


def test_rollouts_beta_is_kept_with_each_episode_beside_its_metrics(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    argv = ["rollouts", "--engine", "reference", "--blueprints", "tag:plan", "--beta", "0.5"]
    assert main([*argv, "--json", "--db", str(db)]) == 0
    with Store(db) as store:
        episodes = store.episodes.list()
    assert episodes and {e.settings["beta"] for e in episodes} == {0.5}
    assert all(e.trajectory["info"]["metrics"]["evidence_drop"] == 0.0 for e in episodes)


def test_ctrl_c_during_rollouts_exits_130_with_the_report_and_a_usable_store(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.duckdb"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "codesearch_core", "rollouts", "--engine", "reference", "--k", "8", "--json", "--db", str(db)],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stderr is not None
    assert proc.stderr.readline().startswith("playing 8 episode(s)")
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    report = json.loads(out)
    assert report["stopped"] is True
    with Store(db) as store:
        assert len(store.episodes.list()) == report["kept"] < report["tasks"]
