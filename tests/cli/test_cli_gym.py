"""`codesearch eval --agent` and `codesearch gym tasks`, end to end on the seeds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codesearch_core.cli import main
from codesearch_core.gym import as_tasks, seed_blueprints
from codesearch_core.store import Store


def test_eval_agent_reference_scores_success_on_every_seed_of_both_files_and_stores_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.duckdb"
    code = main(
        [
            "eval",
            "--agent",
            "--engine",
            "reference",
            "--blueprints",
            "seeds-all",
            "--json",
            "--db",
            str(db),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    summary = json.loads(out)
    tasks = as_tasks(seed_blueprints())
    overall = summary["overall"]
    assert overall["episodes"] == len(tasks.tasks)
    assert overall["success_rate"] == 1.0 and overall["invalid_call_rate"] == 0.0
    assert {"adversarial:pcre2", "plan"} <= set(summary["by_tag"])
    with Store(db) as store:
        (listed,) = store.evals.list()
        run = store.evals.get(listed.run_id)
    assert run is not None and run.engine == "agent:reference"
    assert len(run.items) == len(tasks.tasks)
    trajectory = json.loads(run.items[0].answers[0].raw_text)
    assert (
        trajectory["blueprint_id"] == run.items[0].blueprint_id and trajectory["submit"] is not None
    )


def test_eval_agent_import_replays_a_file_and_a_wrong_episode_scores_lower(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bp = next(b for b in seed_blueprints() if b.plan is None and b.counter_calls)
    lines = [
        {
            "blueprint_id": bp.id,
            "turns": [[bp.counter_calls[0].call.to_dict()]],
            "submit": [{"path": bp.expected[0].path, "start_line": 1, "end_line": 1}],
        },
    ]
    path = tmp_path / "episodes.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    code = main(
        [
            "eval",
            "--agent",
            "--engine",
            "import",
            "--from",
            str(path),
            "--json",
            "--db",
            str(tmp_path / "s.duckdb"),
        ]
    )
    summary = json.loads(capsys.readouterr().out)
    assert code == 0
    assert summary["overall"]["episodes"] == 1
    assert summary["overall"]["success_rate"] == 0.0


def test_eval_agent_beta_and_the_recorded_metrics_reach_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A precise episode: the reference search, then one of its expected spans submitted.
    bp = next(b for b in seed_blueprints() if b.plan is None and len(b.expected) >= 3)
    line = {
        "blueprint_id": bp.id,
        "turns": [[bp.reference_call.to_dict()]],
        "submit": [bp.expected[0].to_dict()],
    }
    path = tmp_path / "episodes.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    summaries = {}
    for beta in ("1", "0.5"):
        argv = ["eval", "--agent", "--engine", "import", "--from", str(path), "--beta", beta]
        assert main([*argv, "--json", "--db", str(tmp_path / "s.duckdb")]) == 0
        summaries[beta] = json.loads(capsys.readouterr().out)
    n = len(bp.expected)
    for beta, summary in summaries.items():
        overall = summary["overall"]
        assert summary["settings"]["beta"] == float(beta)
        assert overall["mean_precision"] == 1.0
        assert overall["mean_recall"] == pytest.approx(1 / n)
        assert overall["mean_calls_per_turn"] == 0.5  # one search over two turns
        assert overall["mean_evidence_drop"] == pytest.approx((n - 1) / n)
    # Precision weighs more under beta 0.5: the precise episode earns more there.
    assert summaries["0.5"]["overall"]["mean_reward"] > summaries["1"]["overall"]["mean_reward"]
    # Without --json the summary lines name the metrics too.
    argv = ["eval", "--agent", "--engine", "import", "--from", str(path)]
    assert main([*argv, "--db", str(tmp_path / "s.duckdb")]) == 0
    out = capsys.readouterr().out
    assert "mean_evidence_drop" in out and "mean_precision" in out


def test_eval_agent_import_of_an_unknown_blueprint_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "episodes.jsonl"
    path.write_text('{"blueprint_id": "no-such-seed", "turns": []}\n', encoding="utf-8")
    code = main(
        [
            "eval",
            "--agent",
            "--engine",
            "import",
            "--from",
            str(path),
            "--db",
            str(tmp_path / "s.duckdb"),
        ]
    )
    assert code == 2
    assert "no-such-seed" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--engine", "import"], "--from FILE"),
        (["--engine", "reference", "--max-turns", "0"], "max_turns"),
        (["--engine", "reference", "--parallel", "65"], "max_parallel"),
        (["--engine", "reference", "--beta", "0"], "beta"),
        (["--engine", "mutations"], "--agent takes the engines"),
        ([], "give --engine"),
    ],
)
def test_eval_agent_bad_flags_are_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    assert main(["eval", "--agent", *argv, "--db", str(tmp_path / "s.duckdb")]) == 2
    assert says in capsys.readouterr().err


def test_reference_without_agent_says_to_add_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "--engine", "reference", "--db", str(tmp_path / "s.duckdb")]) == 2
    assert "--agent" in capsys.readouterr().err


def test_gym_tasks_prints_one_prompt_a_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gym", "tasks", "--blueprints", "tag:plan"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines and all(x["prompt"][1]["role"] == "user" for x in lines)
    assert all(x["blueprint_id"] for x in lines)


def test_tasks_whose_corpus_is_missing_are_named_and_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path / "empty"))
    (tmp_path / "empty").mkdir()
    assert (
        main(["eval", "--agent", "--engine", "reference", "--db", str(tmp_path / "s.duckdb")]) == 2
    )
    err = capsys.readouterr().err
    assert "task(s) left out: their corpus is not here" in err
    assert "no task of seeds has its corpus here" in err


@pytest.mark.parametrize("command", [["eval", "--agent"], ["rollouts"]])
def test_a_missing_tool_stops_agent_episodes_before_the_first(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
) -> None:
    from codesearch_core.tools import binaries

    db = tmp_path / "s.duckdb"
    monkeypatch.setenv("CODESEARCH_RG", str(tmp_path / "not-installed"))  # rg missing
    binaries.clear_caches()
    try:
        assert (
            main([*command, "--engine", "reference", "--blueprints", "tag:plan", "--db", str(db)])
            == 2
        )
    finally:
        monkeypatch.delenv("CODESEARCH_RG")
        binaries.clear_caches()
    err = capsys.readouterr().err
    assert "CODESEARCH_RG=" in err and "playing" not in err
    assert not db.exists()


def test_seeds_names_one_set_in_eval_eval_agent_and_the_gym(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a user met: `--blueprints seeds` meant 116 blueprints for `eval` and 219 for `eval
    --agent`. Now each name is one set: `seeds` the fixture file (its plans left out of a
    single-call eval, and said), `seeds-all` every seed file; the help says how many."""
    from codesearch_core.corpora import SEED_SETS, load_seed_set

    db = tmp_path / "s.duckdb"
    for name in SEED_SETS:
        ids = [bp.id for bp in load_seed_set(name)]
        assert main(["gym", "tasks", "--blueprints", name]) == 0
        assert [json.loads(x)["blueprint_id"] for x in capsys.readouterr().out.splitlines()] == ids
        total, single, plans, _ = SEED_SETS[name]
        code = main(["eval", "--engine", "mutations", "--blueprints", name, "--json",
                     "--db", str(db)])  # fmt: skip
        assert code == 0
        out, err = capsys.readouterr()
        summary = json.loads(out)
        assert summary["overall"]["blueprints"] == single and len(ids) == total
        assert summary["left_out"]["plan"]["blueprints"] == plans
        assert f"{plans} plan blueprint(s) left out" in err
    for command in (["eval"], ["gym", "tasks"], ["rollouts"], ["propose"]):
        with pytest.raises(SystemExit):
            main([*command, "--help"])
        # Without white space: argparse wraps the help, at a hyphen too.
        text = "".join(capsys.readouterr().out.split())
        for name, (total, single, plans, _) in SEED_SETS.items():
            said = f"'{name}':", f"{total}blueprints({single}single-call,{plans}plans)"
            assert all(part in text for part in said), (command, name)
