"""`codesearch synthesize`: the issue's done-when on the shipped webshop corpus, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codesearch_core.cli import main
from codesearch_core.store import Store


def test_synthesize_webshop_writes_30_distinct_verified_drafts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.duckdb"
    code = main(["synthesize", "--corpus", "webshop", "--limit", "50", "--json", "--db", str(db)])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {"mined", "verified", "deduplicated", "kept"} <= set(report)
    assert report["kept"] >= 30 and len(set(report["drafts"])) == report["kept"]
    assert report["verified"] >= report["deduplicated"] >= report["kept"]
    with Store(db) as store:
        drafts, total = store.list_drafts(limit=100)
    assert total == report["kept"]
    assert len({d.findings_hash for d in drafts}) == total


def test_a_corpus_with_nothing_to_mine_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "corpora" / "docs").mkdir(parents=True)
    (tmp_path / "corpora" / "docs" / "notes.md").write_text("# nothing but prose\n")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path / "corpora"))
    code = main(["synthesize", "--corpus", "docs", "--db", str(tmp_path / "s.duckdb")])
    assert code == 2
    assert "nothing to mine in corpus 'docs'" in capsys.readouterr().err


def test_a_model_engine_needs_a_model(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["synthesize", "--corpus", "webshop", "--engine", "openai"])
    assert code == 2
    assert "--engine openai needs --model" in capsys.readouterr().err


def test_a_run_again_makes_no_new_drafts_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A nightly job runs the same command again: finding everything drafted is not an error.
    db = ["--db", str(tmp_path / "s.duckdb")]
    assert main(["synthesize", "--corpus", "telemetry", "--limit", "3", *db]) == 0
    assert main(["synthesize", "--corpus", "telemetry", *db]) == 0
    first = capsys.readouterr().out
    assert "3 already drafted" in first
    assert main(["synthesize", "--corpus", "telemetry", "--json", *db]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["kept"] == 0 and report["already_drafted"] >= 4
    assert main(["synthesize", "--corpus", "telemetry", *db]) == 0
    assert f"0 new drafts, {report['already_drafted']} already drafted" in capsys.readouterr().out


def test_a_corpus_that_gives_no_draft_at_all_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "corpora" / "tiny").mkdir(parents=True)
    (tmp_path / "corpora" / "tiny" / "app.py").write_text("token = 'x'\nprint(1)\n")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path / "corpora"))
    code = main(["synthesize", "--corpus", "tiny", "--db", str(tmp_path / "s.duckdb")])
    out = capsys.readouterr().out
    assert code == 1
    assert "0 new drafts, 0 already drafted" in out
    assert "no drafts: every candidate was dropped" in out
