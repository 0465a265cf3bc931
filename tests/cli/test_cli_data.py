"""`codesearch db ...` and `codesearch export ...`: what they print and the exit codes they return."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from export_support import review_episodes
from store_helpers import blueprint, executed, proposal
from store_holder import store_held_elsewhere

from codesearch_core.cli import main
from codesearch_core.corpora.blueprints import blueprint_to_dict, load_seed_blueprints
from codesearch_core.store import PROPOSAL
from codesearch_core.store.connect import IDLE_RELEASE_S
from codesearch_core.store.core import Store

REPO = Path(__file__).resolve().parents[2]


def _blueprints_file(path: Path, n: int = 3, bad_line: int | None = None) -> Path:
    lines = [json.dumps(blueprint_to_dict(blueprint(i))) for i in range(n)]
    if bad_line is not None:
        lines.insert(bad_line - 1, '{"id": "half a line"')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


#: The corpus `store_helpers.blueprint` names, with its expected file (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("fixtures_corpus")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "studio.duckdb"


def test_db_init_creates_the_store(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "init", "--db", str(db)]) == 0
    assert db.is_file()
    assert "store ready" in capsys.readouterr().out


def test_db_init_seeds_loads_the_shipped_seeds_once(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    (data / "seeds").mkdir(parents=True)
    _blueprints_file(data / "seeds" / "blueprints.jsonl", n=4)
    monkeypatch.setenv("CODESEARCH_DATA", str(data))
    assert main(["db", "--db", str(db), "init", "--seeds"]) == 0
    assert "4 new, 0 already stored" in capsys.readouterr().out
    assert main(["db", "init", "--seeds", "--db", str(db)]) == 0
    assert "0 new, 4 already stored" in capsys.readouterr().out


def test_the_default_store_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "env.duckdb"
    monkeypatch.setenv("CODESEARCH_DB", str(path))
    assert main(["db", "init"]) == 0
    assert path.is_file()


def test_db_import_blueprints_then_again(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _blueprints_file(tmp_path / "bps.jsonl")
    assert main(["db", "import", "blueprints", str(path), "--db", str(db)]) == 0
    assert "3 new, 0 already stored" in capsys.readouterr().out
    assert main(["db", "import", "blueprints", str(path), "--db", str(db)]) == 0
    assert "0 new, 3 already stored" in capsys.readouterr().out


def test_a_bad_line_is_reported_with_its_line_and_exit_2(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _blueprints_file(tmp_path / "bps.jsonl", bad_line=2)
    assert main(["db", "import", "blueprints", str(path), "--db", str(db)]) == 2
    assert f"error: {path}:2: " in capsys.readouterr().err
    with Store(db) as store:
        assert store.counts().blueprints == 0


def test_skip_bad_imports_the_rest_and_exits_1(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _blueprints_file(tmp_path / "bps.jsonl", bad_line=2)
    assert main(["db", "import", "blueprints", str(path), "--skip-bad", "--db", str(db)]) == 1
    captured = capsys.readouterr()
    assert f"skipped {path}:2: " in captured.err
    assert "3 new" in captured.out


def test_a_missing_file_exits_2(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.jsonl"
    assert main(["db", "import", "proposals", str(missing), "--db", str(db)]) == 2
    assert str(missing) in capsys.readouterr().err


def test_db_import_proposals(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(
        ["db", "import", "blueprints", str(_blueprints_file(tmp_path / "b.jsonl")), "--db", str(db)]
    )
    path = tmp_path / "p.jsonl"
    path.write_text(
        json.dumps(
            {"blueprint_id": "bp-001", "raw_text": '{"name": "rg", "arguments": {"pattern": "x"}}'}
        )
        + "\n",
        encoding="utf-8",
    )
    capsys.readouterr()
    assert main(["db", "import", "proposals", str(path), "--db", str(db)]) == 0
    assert "1 new" in capsys.readouterr().out


def _store_with_decisions(db: Path) -> None:
    with Store(db) as store:
        bps = [blueprint(0), blueprint(1, tool="ripgrep_search", language="go")]
        store.blueprints.add(bps)
        a, b, c = store.add_proposals(
            [proposal(bps[0], "a"), proposal(bps[0], "b"), proposal(bps[1], "c")]
        )
        executed(store, [a, b, c])
        store.queue(PROPOSAL).decide(a, "accept", "ann")
        store.queue(PROPOSAL).decide(b, "reject", "ann")
        store.queue(PROPOSAL).decide(c, "accept", "ann")


def test_db_stats_prints_counts_and_json(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _store_with_decisions(db)
    assert main(["db", "stats", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "accepted         2" in out and "acceptance 66.7%" in out
    assert main(["db", "stats", "--json", "--db", str(db)]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["counts"]["rejected"] == 1 and stats["store"] == str(db)


@pytest.mark.parametrize("fmt", ["xlam", "chat", "pairs"])
def test_export_writes_the_file_and_its_manifest(
    db: Path, tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _store_with_decisions(db)
    out = tmp_path / f"{fmt}.jsonl"
    assert main(["export", fmt, "--out", str(out), "--db", str(db), "--with-meta"]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == (1 if fmt == "pairs" else 2)
    assert all("meta" in r for r in rows)
    manifest = json.loads((tmp_path / f"{fmt}.jsonl.manifest.json").read_text(encoding="utf-8"))
    assert manifest["format"] == fmt and manifest["rows"] == len(rows)
    assert f"wrote {len(rows)} {fmt} records" in capsys.readouterr().out


def test_export_filters_and_an_empty_result_exits_1(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _store_with_decisions(db)
    out = tmp_path / "x.jsonl"
    assert main(["export", "xlam", "--out", str(out), "--language", "go", "--db", str(db)]) == 0
    assert len(out.read_text().splitlines()) == 1
    assert main(["export", "xlam", "--out", str(out), "--tool", "none", "--db", str(db)]) == 1
    assert "nothing matched" in capsys.readouterr().err


def test_an_out_of_range_f1_is_rejected_by_the_parser(db: Path, tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["export", "xlam", "--out", str(tmp_path / "x"), "--min-f1", "1.5", "--db", str(db)])
    assert caught.value.code == 2


def _db_stats(db: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codesearch_core", "db", "stats", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **env},
    )


def test_db_stats_runs_while_the_studio_has_the_store_open(db: Path) -> None:
    """Bug 11 of the review issue: `codesearch db stats` refused to run while the studio was open.
    The studio's store (default idle release) lets go of the file between clicks."""
    with Store(db) as store:
        store.blueprints.add([blueprint(1)])
    with store_held_elsewhere(db, idle_release_s=IDLE_RELEASE_S) as studio:
        done = _db_stats(db)
        assert studio.blueprints() == 1  # the studio goes on using its store
    assert done.returncode == 0, done.stderr
    assert re.search(r"^blueprints +1$", done.stdout, re.MULTILINE), done.stdout
    assert "Traceback" not in done.stderr


def test_a_store_held_by_another_process_exits_2_with_a_clear_message(db: Path) -> None:
    with store_held_elsewhere(db, idle_release_s=None) as holder:  # as a long verify run
        done = _db_stats(db, CODESEARCH_LOCK_WAIT="1")
    assert done.returncode == 2
    assert f"in use by process {holder.pid}; waiting up to 1 s" in done.stderr
    assert f"in use by process {holder.pid} (waited 1 s)" in done.stderr
    assert "Traceback" not in done.stderr


def test_export_hf_agent_writes_the_accepted_episodes_and_counts_a_gone_corpus(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Episodes played on three seeds of two corpora (copies: one is then removed).
    corpora = tmp_path / "corpora"
    for name in ("webshop", "telemetry"):
        shutil.copytree(REPO / "data" / "corpora" / name, corpora / name)
    monkeypatch.setenv("CODESEARCH_CORPORA", str(corpora))
    seeds = {"webshop-todo-fixme-comments", "webshop-useeffect-calls-tsx", "webshop-empty-catch-blocks",
             "telemetry-python-bare-except"}  # fmt: skip
    chosen = tmp_path / "seeds.jsonl"
    chosen.write_text("".join(json.dumps(blueprint_to_dict(bp)) + "\n"
                              for bp in load_seed_blueprints() if bp.id in seeds))  # fmt: skip
    rollouts = ["rollouts", "--engine", "reference", "--k", "1", "--blueprints", str(chosen)]
    assert main([*rollouts, "--db", str(db)]) == 0
    with Store(db) as store:  # reviewed on the Episodes queue: one of them rejected
        accepted = review_episodes(store, reject=frozenset({"webshop-empty-catch-blocks"}))
    assert len(accepted) == 3
    shutil.rmtree(corpora / "telemetry")
    capsys.readouterr()
    out = tmp_path / "sft"  # a folder: hf-agent.jsonl is written in it
    assert main(["export", "hf-agent", "--out", str(out), "--db", str(db)]) == 0
    captured = capsys.readouterr()
    assert f"wrote 2 hf-agent episodes to {out / 'hf-agent.jsonl'}" in captured.out
    assert "replayed in the gym: " in captured.out
    assert "skipped 1 episode(s): their corpus is gone: telemetry (1)" in captured.err
    rows = [json.loads(x) for x in (out / "hf-agent.jsonl").read_text().splitlines()]
    manifest = json.loads((out / "hf-agent.jsonl.manifest.json").read_text(encoding="utf-8"))
    with Store(db) as store:
        kept = [e for e in store.episodes.list(decision="accept") if e.corpus == "webshop"]
    # Exactly the accepted episodes whose corpus is here, in order, each with the gym's tool
    # messages; the rejected one is not there.
    assert manifest["extra"]["episode_ids"] == [e.episode_id for e in kept]
    assert len(kept) == 2
    assert manifest["counts"]["skipped_corpus_gone"] == 1
    assert [r["messages"][1]["content"].split("\n", 1)[0] for r in rows] == ["Corpus: webshop"] * 2
    assert all(any(m["role"] == "tool" for m in r["messages"]) for r in rows)
    # Filters that match no episode: exit 1, said so.
    assert main(["export", "sharegpt-agent", "--out", str(out), "--tag", "none",
                 "--db", str(db)]) == 1  # fmt: skip
    assert "nothing matched: no accepted episodes" in capsys.readouterr().err
    assert main(["export", "hf-agent", "--out", str(out), "--include-reference",
                 "--db", str(db)]) == 2  # fmt: skip
    assert "exports the gym's episodes" in capsys.readouterr().err
