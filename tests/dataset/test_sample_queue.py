"""The QA sample in the studio's QA queue: `dataset sample --queue` queues it, reviewers' settled
decisions (and imported verdict files, through the same code path) become the card's estimate and
the rejected list; resampling keeps what reviewers decided; bad input changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from statsmodels.stats.proportion import proportion_confint

from codesearch_core.cli import main
from codesearch_core.dataset import dataset_of
from codesearch_core.store import QA, ReviewSettings, Store


def _sample(out: Path, db: Path, *extra: str) -> int:
    return main(["dataset", "sample", str(out), "--n", "6", "--stratify", "language", "--queue",
                 "--db", str(db), *extra])  # fmt: skip


def _card(out: Path, db: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["dataset", "card", str(out), "--db", str(db)]) == 0
    return capsys.readouterr().out


def test_the_queues_settled_decisions_make_the_cards_estimate(
    built_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "studio.duckdb"
    assert _sample(built_copy, db) == 0
    assert "QA queue" in (said := capsys.readouterr().out) and "6 new" in said
    dataset = dataset_of(built_copy)
    with Store(db) as store:
        store.set_review_settings(ReviewSettings(reviews_per_item=2))
        ids = [i.qa_id for i in store.qa.items(dataset.dataset_id)]
        assert len(ids) == 6 and all(i.dataset.folder == str(built_copy.resolve())
                                     for i in store.qa.items(dataset.dataset_id))  # fmt: skip
        for qa_id, (ann, bob) in zip(ids, [("accept", "accept"), ("accept", "accept"),
                                           ("reject", "reject"), ("accept", "reject"),
                                           ("accept", None)], strict=False):  # fmt: skip
            store.queue(QA).decide(qa_id, ann, "ann")
            if bob:
                store.queue(QA).decide(qa_id, bob, "bob", note="wrong span")
    text = _card(built_copy, db, capsys)
    # Settled: 2 correct, 1 incorrect; one conflict, one half-reviewed and one untouched: open.
    _low, high = proportion_confint(2, 3, alpha=0.05, method="wilson")
    card = json.loads((built_copy / "card.json").read_text())
    assert card["qa"]["unweighted"]["high"] == pytest.approx(high, abs=1e-6)
    o = card["qa"]["overall"]
    assert f"(95% interval {100 * (1 - o['high']):.1f}% to {100 * (1 - o['low']):.1f}%)" in text
    assert "From 3 reviewed" in text
    assert "3 settled, 2 open, 1 in conflict" in text
    rejected = ids[2].split(".", 1)[1]
    assert (built_copy / "qa/rejected.txt").read_text() == f"{rejected}\n"
    card = json.loads((built_copy / "card.json").read_text())
    assert sum(s["reviewed"] for s in card["qa"]["strata"].values()) == 3

    # A file's verdicts go through the same path: one more reviewed item, listed if incorrect.
    (verdicts := tmp_path / "v.jsonl").write_text(
        json.dumps({"id": ids[5].split(".", 1)[1], "verdict": "incorrect"}) + "\n"
    )
    capsys.readouterr()
    assert main(["dataset", "sample", str(built_copy), "--import-verdicts", str(verdicts),
                 "--db", str(db)]) == 0  # fmt: skip
    assert "2 of 4 reviewed items correct; estimated wrong" in capsys.readouterr().out
    assert len((built_copy / "qa/rejected.txt").read_text().split()) == 2

    # An undo in the queue is undone on the card too.
    with Store(db) as store:
        store.queue(QA).undo("bob", item_id=ids[2])
    assert "From 3 reviewed" in _card(built_copy, db, capsys)
    assert (built_copy / "qa/rejected.txt").read_text().split() == [ids[5].split(".", 1)[1]]


def test_resampling_says_what_it_kept_and_replaced(
    built_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "studio.duckdb"
    assert _sample(built_copy, db) == 0
    assert "QA queue" in capsys.readouterr().out
    with Store(db) as store:
        first = store.queue(QA).lease_next(None, "ann")
        assert first is not None
        store.queue(QA).decide(first, "accept", "ann")
    assert _sample(built_copy, db, "--seed", "5") == 0
    said = capsys.readouterr().out
    assert "1 with decisions kept" in said and "new" in said
    with Store(db) as store:
        items = store.qa.items(dataset_of(built_copy).dataset_id)
        assert first in {i.qa_id for i in items} and len(items) in (6, 7)


def test_a_folder_without_a_data_set_is_refused_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "studio.duckdb"
    assert _sample(tmp_path, db) == 2
    assert "holds no built data set" in capsys.readouterr().err
    assert not db.exists() and not (tmp_path / "qa").exists()


def test_a_verdict_on_an_unknown_item_is_refused_naming_the_line(
    built_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "studio.duckdb"
    assert _sample(built_copy, db) == 0
    (verdicts := tmp_path / "v.jsonl").write_text('{"id": "nope", "verdict": "correct"}\n')
    card = (built_copy / "card.json").read_bytes()
    assert main(["dataset", "sample", str(built_copy), "--import-verdicts", str(verdicts),
                 "--db", str(db)]) == 2  # fmt: skip
    assert "v.jsonl:1: 'nope' is not in the QA sample" in capsys.readouterr().err
    assert (built_copy / "card.json").read_bytes() == card
    assert not (built_copy / "qa/rejected.txt").exists()
