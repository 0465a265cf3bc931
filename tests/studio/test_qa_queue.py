"""The QA queue's measured error rate on the Overview (issue 39): incorrect of judged with the data
set card's 95% Wilson interval, overall and per data set."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesearch_core import studio
from codesearch_core.dataset import estimate
from codesearch_core.store import QA, QADataset, ReviewSettings, Store, settled_verdicts

SMALL = QADataset("d5e7", "small", "/data/ds", "f00d")
OTHER = QADataset("a1b2", "other", "/data/other", "beef")


def test_the_error_rate_is_the_cards_share_incorrect_overall_and_per_data_set(
    tmp_path: Path,
) -> None:
    verdicts = {SMALL: "aaarrx", OTHER: "ar"}  # a accept, r reject, x a conflict (no verdict)
    votes = {"a": ("accept", "accept"), "r": ("reject", "reject"), "x": ("accept", "reject")}
    with Store(tmp_path / "s.duckdb") as store:
        store.set_review_settings(ReviewSettings(reviews_per_item=2))
        for dataset, said in verdicts.items():
            ids = [f"{dataset.name}-{i}" for i in range(len(said) + 1)]  # one left open
            store.qa.import_sample(dataset, [("all", {"id": i}) for i in ids])
            for item, action in zip(ids, said, strict=False):
                for reviewer, vote in zip(("ann", "bob"), votes[action], strict=True):
                    store.queue(QA).decide(f"{dataset.dataset_id}.{item}", vote, reviewer)
        overall, per = studio.error_rates(store.queue(QA).stats())
        judged = {d.dataset_id: settled_verdicts(store.qa.items(d.dataset_id)) for d in verdicts}
    assert (overall.incorrect, overall.judged) == (3, 7)
    assert [(r.label, r.dataset_id, r.incorrect, r.judged) for r in per] == [
        ("small", "d5e7", 2, 5), ("other", "a1b2", 1, 2)]  # fmt: skip
    # The data set card's figures of the same verdicts (`dataset.estimate`: the share correct).
    for rate in per:
        card = estimate(judged[rate.dataset_id], dict.fromkeys(judged[rate.dataset_id], "all"))
        share = card["overall"]
        assert rate.rate == pytest.approx(1 - share["share"])
        assert (rate.low, rate.high) == pytest.approx(
            (1 - share["high"], 1 - share["low"]), abs=1e-6
        )
        assert rate.low is not None and rate.high is not None and rate.low < rate.rate < rate.high
    assert "2 incorrect of 5 judged" in per[0].interval and "95% CI" in per[0].interval


def test_no_verdict_yet_has_no_rate(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        store.qa.import_sample(SMALL, [("all", {"id": "a"})])
        overall, per = studio.error_rates(store.queue(QA).stats())
    assert overall.rate is None and overall.interval == "no verdict yet"
    assert [(r.label, r.judged, r.low) for r in per] == [("small", 0, None)]
