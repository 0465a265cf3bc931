"""`codesearch eval --agent --config FILE [--resume]` (`cli.agent_config`): a TOML eval of a model
behind the scripted OpenAI-compatible server (`gym_support.AgentServer`), Ctrl-C'd mid-run in a
real process, then resumed: the run is completed under its id, no episode played twice."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from ctrl_c_support import CLI_WITH_CTRL_C
from gym_support import AgentServer, reference_turns

from codesearch_core.cli import main
from codesearch_core.corpora import blueprint_to_dict
from codesearch_core.gym import Task, as_tasks, seed_blueprints
from codesearch_core.store import UNFINISHED, EvalRun, Store

#: Two single-call seeds and a plan seed (two searches, then the submit).
SEEDS = ("webshop-useeffect-calls-tsx", "webshop-todo-fixme-comments",
         "datapipe-plan-users-sql-select-star")  # fmt: skip
ROLLOUTS = 2


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    chosen = as_tasks(bp for bp in seed_blueprints() if bp.id in SEEDS)
    assert len(chosen.tasks) == len(SEEDS), chosen.missing
    return list(chosen.tasks)


class HangingServer(AgentServer):
    """The scripted agent, which stops answering after `answered` requests until released: a
    model server that hangs, so that the eval is interrupted at a known point."""

    def __init__(self, tasks: list[Task], answered: int) -> None:
        super().__init__(tasks)
        self.answered = answered
        self.hung = threading.Event()
        self.release = threading.Event()

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        if len(self.requests) > self.answered and not self.release.is_set():
            self.hung.set()
            self.release.wait(60)
        return super().answer(body)


def write_config(tmp_path: Path, url: str, max_turns: int = 4) -> Path:
    chosen = [blueprint_to_dict(bp) for bp in seed_blueprints() if bp.id in SEEDS]
    (tmp_path / "bps.jsonl").write_text("".join(json.dumps(bp) + "\n" for bp in chosen), "utf-8")
    toml = [
        'engine = "openai"',
        'model = "scripted-agent"',
        f"num_rollouts = {ROLLOUTS}",
        "max_concurrent = 1  # one episode at a time: the interruption falls between two",
        "[client]",
        f'base_url = "{url}"',
        "[sampling]",
        "temperature = 0.0",
        "seed = 3",
        "[select]",
        f'blueprints = "{tmp_path / "bps.jsonl"}"',
        "[env]",
        f"max_turns = {max_turns}",
    ]
    path = tmp_path / "eval.toml"
    path.write_text("\n".join(toml) + "\n", encoding="utf-8")
    return path


def the_run(db: Path) -> EvalRun:
    with Store(db) as store:
        (listed,) = store.evals.list()
        run = store.evals.get(listed.run_id)
    assert run is not None
    return run


def test_an_interrupted_toml_eval_is_resumed_under_its_id_without_playing_an_episode_twice(
    tmp_path: Path, tasks: list[Task], capsys: pytest.CaptureFixture[str]
) -> None:
    turns = {t.blueprint.id: len(reference_turns(t)) for t in tasks}
    db = tmp_path / "s.duckdb"
    first_two = sum(turns[b] for b in SEEDS[:1]) * ROLLOUTS  # the first seed's two episodes
    server = HangingServer(tasks, answered=first_two)
    try:
        config = write_config(tmp_path, server.url)
        command = ["eval", "--agent", "--config", str(config), "--db", str(db)]
        proc = subprocess.Popen([sys.executable, "-c", CLI_WITH_CTRL_C, *command],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)  # fmt: skip
        assert server.hung.wait(120), "the eval never reached its third episode"
        proc.send_signal(signal.SIGINT)  # Ctrl-C while the third episode waits on the model
        server.release.set()  # the hung request is answered, its thread can end
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err.decode()

        # What was finished is stored, marked unfinished, with its config.
        stopped = the_run(db)
        assert f"eval run {stopped.run_id} stored unfinished" in err.decode()
        assert stopped.summary[UNFINISHED] == {"episodes": ROLLOUTS, "of": ROLLOUTS * len(SEEDS)}
        assert [(i.blueprint_id, len(i.answers)) for i in stopped.items] == [(SEEDS[0], ROLLOUTS)]
        assert stopped.summary["config"]["num_rollouts"] == ROLLOUTS

        # A changed file is refused, and so is a flag the file covers.
        changed = write_config(tmp_path, server.url, max_turns=5)
        assert main([*command[:3], str(changed), "--db", str(db), "--resume", stopped.run_id]) == 2
        assert "env.max_turns differ" in capsys.readouterr().err
        config = write_config(tmp_path, server.url)
        assert main([*command, "--resume", stopped.run_id, "--n", "3"]) == 2
        assert "--n given beside --config" in capsys.readouterr().err

        # Resumed: only the pairs it lacked are played (asked of the model), under the same id.
        before = len(server.requests)
        assert main([*command, "--resume", stopped.run_id, "--json"]) == 0, capsys.readouterr()
        summary = json.loads(capsys.readouterr().out)
        asked = len(server.requests) - before
        assert asked == sum(turns[b] for b in SEEDS[1:]) * ROLLOUTS
        # Finished: it cannot be resumed again.
        assert main([*command, "--resume", summary["run_id"]]) == 2
        assert "is finished" in capsys.readouterr().err
    finally:
        server.release.set()
        server.close()
    run = the_run(db)  # still the one run
    assert run.run_id == stopped.run_id == summary["run_id"]
    assert run.created_at == stopped.created_at and UNFINISHED not in run.summary
    assert Counter(i.blueprint_id for i in run.items) == dict.fromkeys(SEEDS, 1)
    assert all(len(i.answers) == ROLLOUTS for i in run.items)
    assert run.summary["overall"]["episodes"] == ROLLOUTS * len(SEEDS)
    assert run.summary["overall"]["success_rate"] == 1.0  # the scripted agent is the reference
    # The first seed's episodes are the ones stored before the interruption, kept as they were.
    assert run.items[0].answers == stopped.items[0].answers


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        ("engine = 'reference'\nnum_rollouts = 'two'\n", "num_rollouts: must be int"),
        ("engine = 'reference'\n[select]\nlimt = 3\n", "select.limt: not a key of [select]"),
        ("engine = 'reference'\n[env]\nmax_turns = 0\n", "max_turns must be 1 to 64"),
        ("engine = 'openai'\n", "model: missing"),
        ("engine = 'mutations'\n", "engine: must be one of"),
        ("engine = 'reference'\nmodel = [\n", "not TOML"),
    ],
)
def test_a_bad_toml_is_a_clear_error_and_stores_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], toml: str, says: str
) -> None:
    config = tmp_path / "eval.toml"
    config.write_text(toml, encoding="utf-8")
    db = tmp_path / "s.duckdb"
    assert main(["eval", "--agent", "--config", str(config), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert says in err and str(config) in err
    assert not db.exists()


def test_resume_needs_the_config_and_a_run_of_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.duckdb"
    assert main(["eval", "--agent", "--engine", "reference", "--resume", "--db", str(db)]) == 2
    assert "--resume continues a run begun with --config" in capsys.readouterr().err
    config = tmp_path / "eval.toml"
    config.write_text("engine = 'reference'\n[select]\nlimit = 1\n", encoding="utf-8")
    assert main(["eval", "--agent", "--config", str(config), "--db", str(db), "--resume"]) == 2
    assert "no unfinished run of" in capsys.readouterr().err
    assert main(["eval", "--agent", "--config", str(config), "--db", str(db), "--resume", "x"]) == 2
    assert "no eval run 'x'" in capsys.readouterr().err
