"""`codesearch review label` and `review correct`: a label per call of a stored episode and a
corrected step, from the command line, in the real store and the real gym (the reference policy's
episode of the seed plan, a search, a second search and the submit)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from codesearch_core.access import Role
from codesearch_core.cli import main
from codesearch_core.gym import ReferencePolicy, as_tasks, rollouts, seed_blueprints
from codesearch_core.store import EPISODE, AuditFilters, Store


@pytest.fixture
def stored(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "studio.duckdb"
    plan = next(t for t in as_tasks(seed_blueprints()).tasks if t.blueprint.plan is not None)
    with Store(db) as store:
        assert rollouts(ReferencePolicy(), [plan], store, k=1).kept == 1
        (episode,) = store.episodes.list()
    return db, episode.episode_id


def test_label_records_a_reviewers_label_and_undo_takes_it_back(
    stored: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, ep = stored
    base = ["--db", str(db)]
    assert main(["review", "label", ep, "1", "1", "useful", "--by", "ann", *base]) == 0
    assert main(["review", "label", ep, "1", "1", "Wrong", "--note", "too wide", "--by", "bob",
                 *base]) == 0  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == (
        f"labelled turn 1, call 1 of episode {ep[:12]} wrong by bob (event 2); "
        "the call's labels: useful 1, wrong 1"
    )
    assert main(["review", "label", "--undo", "--by", "bob", *base]) == 0
    assert (
        capsys.readouterr().out
        == f"undid bob's label 'wrong' of turn 1, call 1 of episode {ep[:12]}\n"
    )
    with Store(db) as store:
        assert [(x.reviewer, x.label) for x in store.steps.labels(ep)] == [("ann", "useful")]
        trail = store.audit_log(AuditFilters(action="step"))
        assert [(e.action, e.actor) for e in trail] == [
            ("step.undo", "bob"),
            ("step.label", "bob"),
            ("step.label", "ann"),
        ]


def test_label_refuses_a_call_the_episode_has_not_and_a_missing_argument(
    stored: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, ep = stored
    assert main(["review", "label", ep, "7", "1", "useful", "--db", str(db)]) == 2
    assert "has turns 1 to 3, not 7" in capsys.readouterr().err
    assert main(["review", "label", ep, "1", "--db", str(db)]) == 2
    assert "needs EPISODE_ID TURN CALL LABEL" in capsys.readouterr().err
    with Store(db) as store:
        assert store.steps.labels(ep) == []


def test_correct_plays_the_edited_turn_and_stores_the_episode_beside_the_original(
    stored: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, ep = stored
    call = tmp_path / "call.json"
    call.write_text(json.dumps({"name": "ripgrep_search",
                                "arguments": {"pattern": "SELECT \\*", "file_types": ["sql"]}}))  # fmt: skip
    assert main(["review", "correct", ep, "--turn", "2", "--call", f"@{call}", "--by", "ann",
                 "--db", str(db)]) == 0  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"corrected turn 2 of episode {ep[:12]}: played again, then the "
                             "original's submit, ending submitted with reward ")  # fmt: skip
    with Store(db) as store:
        (fixed,) = store.steps.corrections()
        assert out[1] == f"stored as episode {fixed.episode_id} (corrected_from {ep})"
        assert fixed.trajectory["turns"][1][0]["arguments"]["pattern"] == "SELECT \\*"
        assert store.audit_log(AuditFilters(action="episode.correct"))[0].actor == "ann"
    # A malformed call: a clear error, nothing stored.
    assert main(["review", "correct", ep, "--turn", "2", "--call", '{"name": "submit"}',
                 "--db", str(db)]) == 2  # fmt: skip
    assert "edited call 1" in capsys.readouterr().err
    with Store(db) as store:
        assert len(store.episodes.list()) == 2


def test_export_dpo_steps_writes_the_corrected_pairs(
    stored: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, ep = stored
    edit = '{"name": "ripgrep_search", "arguments": {"pattern": "users"}}'
    assert main(["review", "correct", ep, "--turn", "1", "--call", edit, "--db", str(db)]) == 0
    out = tmp_path / "out"
    assert main(["export", "dpo-steps", "--out", str(out), "--db", str(db)]) == 0
    assert "wrote 1 dpo-steps records" in capsys.readouterr().out
    (row,) = [json.loads(x) for x in (out / "dpo-steps.jsonl").read_text().splitlines()]
    assert row["chosen"][0]["tool_calls"][0]["function"]["arguments"] == {"pattern": "users"}


# --- a lead's bulk actions (issue 39) --------------------------------------------------------------


@pytest.fixture
def played(tmp_path: Path) -> tuple[Path, list[str]]:
    """The reference policy's episodes of four seed blueprints (each verified: reward 1), and a
    model's episode of a fifth, with a lower reward."""
    db = tmp_path / "studio.duckdb"
    tasks = as_tasks(seed_blueprints()).tasks[:5]
    with Store(db) as store:
        assert rollouts(ReferencePolicy(), tasks[:4], store, k=1).kept == 4
        reference = [e.episode_id for e in store.episodes.list()]
        assert all(e.reward == 1.0 for e in store.episodes.list())
        first = store.episodes.list()[0]
        model = replace(first, blueprint_id=tasks[4].blueprint.id, engine="openai", model="m1",
                        reward=0.25)  # fmt: skip
        assert store.episodes.save([model]) == 1
    return db, reference


def test_review_accept_takes_every_verified_reference_episode_in_one_command_and_undo_bulk_back(
    played: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    db, reference = played
    n = len(reference)
    cmd = ["review", "accept", "--queue", "episode", "--filter", "engine=reference",
           "--filter", "min_reward=1", "--by", "lee", "--db", str(db)]  # fmt: skip
    assert main(cmd) == 0  # the plan only
    assert capsys.readouterr().out.splitlines() == [
        f"episode queue, filters min_reward=1.0, engine=reference, decision=undecided: "
        f"{n} will be accepted",
        "nothing decided: run again with --yes to apply",
    ]
    with Store(db) as store:
        assert store.queue(EPISODE).counts()["accept"] == 0
    assert main([*cmd, "--yes", "--reason", "verified by the gym"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith(f"accepted {n} as lee (batch bulk-")
    with Store(db) as store:
        assert {e.episode_id for e in store.episodes.list(decision="accept")} == set(reference)
        assert store.queue(EPISODE).counts() == {"open": 1, "accept": n, "reject": 0, "conflict": 0}
        (entry,) = store.audit_log(AuditFilters(action="episode.bulk"))
        assert (entry.action, entry.actor, entry.detail["items"]) == (
            "episode.bulk.accept",
            "lee",
            n,
        )
    # Nothing open is left to accept: said, and nothing written.
    assert main([*cmd, "--yes"]) == 2
    assert "nothing to accept: 0 will be accepted" in capsys.readouterr().err
    assert main(["review", "undo-bulk", "--by", "lee", "--db", str(db)]) == 0
    undone = capsys.readouterr().out
    assert undone.startswith("undid lee's bulk action bulk-")
    assert undone.endswith(f" in the episode queue: {n} decisions taken back\n")
    with Store(db) as store:
        assert store.queue(EPISODE).counts()["open"] == n + 1
        assert [e.action for e in store.audit_log(AuditFilters(action="episode.bulk"))] == [
            "episode.bulk.undo", "episode.bulk.accept"]  # fmt: skip
    assert main(["review", "undo-bulk", "--by", "lee", "--db", str(db)]) == 2
    assert "lee has no bulk action to take back in any queue" in capsys.readouterr().err


def test_review_reject_over_a_reward_bound_and_a_tool_the_episode_called(
    played: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    db, reference = played
    with Store(db) as store:
        (model,) = [e for e in store.episodes.list() if e.engine == "openai"]
    tool = model.trajectory["turns"][0][0]["name"]
    assert main(["review", "reject", "--queue", "episode", "--filter", "max_reward=0.99",
                 "--filter", f"tool_used={tool}", "--reason", "missed findings", "--yes",
                 "--db", str(db)]) == 0  # fmt: skip
    assert "1 will be rejected" in capsys.readouterr().out
    with Store(db) as store:
        (rejected,) = store.episodes.list(decision="reject")
        assert rejected.episode_id == model.episode_id and rejected.episode_id not in reference
    assert main(["review", "reject", "--queue", "episode", "--filter", "max_reward=0.99",
                 "--filter", "tool_used=read_file", "--db", str(db)]) == 0  # fmt: skip
    assert "0 will be rejected" in capsys.readouterr().out


def test_a_bad_filter_or_queue_is_a_clear_error_and_decides_nothing(
    played: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    db, _ = played
    base = ["review", "accept", "--yes", "--db", str(db)]
    assert main([*base, "--queue", "episode", "--filter", "reward=1"]) == 2
    err = capsys.readouterr().err
    assert "unknown filter 'reward=1' for the episode queue" in err
    assert "min_reward, max_reward, engine, model, corpus, tool_used, end_reason" in err
    assert main([*base, "--queue", "episode", "--filter", "min_reward=high"]) == 2
    assert "min_reward='high': use a number" in capsys.readouterr().err
    assert main([*base, "--queue", "qa", "--filter", "state=maybe"]) == 2
    assert "decision='maybe': use one of undecided, accepted" in capsys.readouterr().err
    assert main([*base, "--queue", "episodes"]) == 2
    assert "unknown kind of item 'episodes': use one of proposal" in capsys.readouterr().err
    with Store(db) as store:
        assert store.queue(EPISODE).counts()["accept"] == 0


def test_a_bulk_action_by_an_annotator_of_the_team_is_refused(
    played: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    db, _ = played
    with Store(db) as store:
        store.set_role("ann", Role.ANNOTATOR)
    assert main(["review", "reject", "--queue", "episode", "--yes", "--by", "ann",
                 "--db", str(db)]) == 2  # fmt: skip
    assert "Not allowed: it needs the lead role" in capsys.readouterr().err
    with Store(db) as store:
        assert store.queue(EPISODE).counts()["reject"] == 0
