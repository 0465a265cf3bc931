"""`codesearch synthesize`: the issue's done-when on the shipped webshop corpus, and bad input."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from codesearch_core.cli import main
from codesearch_core.store import Store
from tests.ctrl_c_support import ctrl_c_when


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
        drafts, total = store.drafts.list(limit=100)
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


#: The CLI with Ctrl-C's usual handler: a Python started from a background job inherits SIGINT
#: ignored, and would not see the test's signal.
def _write_big_corpus(root: Path, files: int) -> None:
    """Python and JavaScript files whose calls give one draft per three files: synthesis takes
    tens of seconds on it, writing drafts all along."""
    for i in range(files):
        name = hashlib.sha1(str(i // 3).encode()).hexdigest()[:10]  # distinct intents
        folder = root / f"pkg{i % 50}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i}.py").write_text(
            f"# load_{name}(x) in a comment\ndef handler_{i}(x):\n"
            f"    return load_{name}(x) + load_{name}(x, 1)\n",
            encoding="utf-8",
        )
        (folder / f"mod{i}.js").write_text(
            f"// fetch_{name}(a) in a comment\nfunction run{i}(a) {{\n"
            f"  return fetch_{name}(a, 'fetch_{name}(a)');\n}}\n",
            encoding="utf-8",
        )


def test_ctrl_c_with_json_prints_what_was_kept_and_exits_130(tmp_path: Path) -> None:
    corpora = tmp_path / "corpora"
    _write_big_corpus(corpora / "big", 3000)
    db = tmp_path / "s.duckdb"
    command = ["synthesize", "--corpus", "big", "--json", "--batch-size", "16", "--db", str(db)]
    # The first count of kept drafts on the progress line: the Ctrl-C lands mid-run.
    run = ctrl_c_when(
        command, rb"synthesize: +[1-9]", env={**os.environ, "CODESEARCH_CORPORA": str(corpora)}
    )
    assert run.returncode == 130, run.terminal
    report = json.loads(run.stdout)
    assert report["stopped"] is True and report["kept"] == len(report["drafts"])
    assert "Traceback" not in run.terminal
    with Store(db) as store:
        drafts, total = store.drafts.list(status=None, corpus="big", limit=100_000)
    assert total == report["kept"] > 0
    assert {d.id for d in drafts} == set(report["drafts"])
