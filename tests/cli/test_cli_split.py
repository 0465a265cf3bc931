"""`codesearch db split` on a real store with the seeds: blueprints by id or tag go to the eval
split and back; `codesearch export` then leaves them out (saying so) unless `--include-eval`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codesearch_core.cli import main
from codesearch_core.export import manifest_path
from codesearch_core.ingest import ensure_seeded
from codesearch_core.store import BlueprintFilters, Store

TAG = "lang:go"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "s.duckdb"
    with Store(path) as store:
        ensure_seeded(store)
    return path


def held(db: Path) -> set[str]:
    with Store(db) as store:
        page = store.blueprints.list(BlueprintFilters(split="eval"), limit=1000)
    return {bp.id for bp in page.items}


def test_by_tag_then_back_by_id(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "split", "eval", "--tag", TAG, "--db", str(db)]) == 0
    go = held(db)
    assert go and f"{len(go)} of {len(go)} blueprint(s) moved to eval" in capsys.readouterr().out
    one = sorted(go)[0]
    assert main(["db", "split", "train", one, "--db", str(db)]) == 0
    assert held(db) == go - {one}
    assert f"{len(go) - 1} held out for evaluation in all" in capsys.readouterr().out


def test_unknown_ids_a_tag_no_one_has_and_no_names_are_errors(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["db", "split", "eval", "no-such-seed", "--db", str(db)]) == 2
    assert "no blueprint with id 'no-such-seed'" in capsys.readouterr().err
    assert main(["db", "split", "eval", "--tag", "no-such-tag", "--db", str(db)]) == 2
    assert "no stored blueprint has the tag 'no-such-tag'" in capsys.readouterr().err
    assert main(["db", "split", "eval", "--db", str(db)]) == 2
    assert "name the blueprints" in capsys.readouterr().err
    assert held(db) == set()


def test_export_holds_the_eval_split_out_unless_asked(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["db", "split", "eval", "--tag", TAG, "--db", str(db)]) == 0
    go = held(db)
    out = tmp_path / "prompts.jsonl"
    assert main(["export", "hf-prompts", "--out", str(out), "--db", str(db)]) == 0
    err = capsys.readouterr().err
    assert f"skipped {len(go)} blueprint(s): held out for evaluation (split: eval)" in err
    assert "blueprint(s): a plan's reference is several calls" in err
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").split("\n") if line]
    assert not go & {r["blueprint_id"] for r in rows}
    counts = json.loads(manifest_path(out).read_text(encoding="utf-8"))["counts"]
    assert counts["held_out_eval"] == len(go)
    assert main(["export", "hf-prompts", "--out", str(out), "--db", str(db),
                 "--include-eval"]) == 0  # fmt: skip
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").split("\n") if line]
    assert go <= {r["blueprint_id"] for r in rows}
    assert "held out" not in capsys.readouterr().err
