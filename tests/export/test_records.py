"""How the reward-ranked preference formats pick their pairs once people have reviewed: the best
accepted answer is chosen; reviewed rejections stay whatever their margin; unreviewed proposals
must be graded at least MIN_MARGIN below the chosen answer."""

from __future__ import annotations

from pathlib import Path

from store_helpers import blueprint, finding, grade, proposal, reward, run_ok

from codesearch_core.export.records import MIN_MARGIN, ExportCounts, records
from codesearch_core.store.core import Store


def test_reviewed_and_unreviewed_answers_pair_with_the_best_accepted_one(
    tmp_path: Path, fixtures_corpus: Path
) -> None:
    with Store(tmp_path / "studio.duckdb") as store:
        bp = blueprint(1)
        store.add_blueprints([bp])
        ids = {}
        for name, total, action in [
            ("best", 0.9, "accept"),
            ("fine", 0.7, "accept"),
            ("close", 0.8, "reject"),  # reviewers said no, though it grades near the best
            ("near", 0.85, None),  # unreviewed and nearly as good: no lesson
            ("worse", 0.2, None),
        ]:
            [ids[name]] = store.add_proposals([proposal(bp, name)])
            store.record_execution_and_grade(
                ids[name], run_ok(finding()), grade(total), reward(total)
            )
            if action:
                store.record_decision(ids[name], action, "ann")
        counter = ExportCounts()
        rows = list(records(store, "hf-preference", with_meta=True, counter=counter))
    by_rejected = {r["meta"]["rejected"]["proposal_id"]: r for r in rows}
    assert set(by_rejected) == {ids["close"], ids["worse"]}
    assert {r["meta"]["chosen"]["proposal_id"] for r in rows} == {ids["best"]}
    assert by_rejected[ids["close"]]["margin"] < MIN_MARGIN
    assert by_rejected[ids["worse"]]["margin"] == 0.9 - 0.2
    assert counter.counts["skipped_not_worse"] == 1
    assert counter.counts["rejected_reviewed"] == counter.counts["rejected_graded_worse"] == 1
    assert {r["chosen_reward"] for r in rows} == {0.9}
