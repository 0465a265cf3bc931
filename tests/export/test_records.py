"""How the reward-ranked preference formats pick their pairs once people have reviewed: the best
accepted answer is chosen; reviewed rejections stay whatever their margin; unreviewed proposals
must be graded at least MIN_MARGIN below the chosen answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from export_support import seed_blueprints
from store_helpers import blueprint, finding, grade, proposal, reward, run_ok

from codesearch_core.corpora.blueprints import load_seed_blueprints
from codesearch_core.engines.mutations import MutationEngine
from codesearch_core.export.episode_rows import ExportCounts
from codesearch_core.export.records import MIN_MARGIN, RANKED, ExportFormat, records
from codesearch_core.export.writers import export
from codesearch_core.store import PROPOSAL
from codesearch_core.store.core import Store
from codesearch_core.verify.pending import verify_pending


def test_reviewed_and_unreviewed_answers_pair_with_the_best_accepted_one(
    tmp_path: Path, fixtures_corpus: Path
) -> None:
    with Store(tmp_path / "studio.duckdb") as store:
        bp = blueprint(1)
        store.blueprints.add([bp])
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
                store.queue(PROPOSAL).decide(ids[name], action, "ann")
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


#: The manifest counts that name whole blueprints, each blueprint under one: the first reason it
#: was left out (held out, then a plan, then no gold ...), or paired.
BLUEPRINT_COUNTS = (
    "held_out_eval",
    "skipped_plan",
    "skipped_no_gold",
    "skipped_reference_not_reproduced",
    "skipped_no_rejected",
    "paired_blueprints",
)


@pytest.mark.parametrize("fmt", sorted(RANKED), ids=str)
def test_the_ranked_manifest_counts_every_blueprint_once(tmp_path: Path, fmt: ExportFormat) -> None:
    # Real seeds with the mutation engine's proposals, run and graded, as `codesearch verify`
    # leaves them; one plan and one single-call blueprint held out, one plan not.
    seeds = load_seed_blueprints()
    plans = [bp for bp in seeds if bp.plan is not None]
    blueprints = [*seed_blueprints(), *(bp for bp in plans[1:2])]
    held = [plans[1].id, next(bp.id for bp in blueprints if bp.plan is None)]
    with Store(tmp_path / "studio.duckdb") as store:
        store.blueprints.add(blueprints)
        store.add_proposals(MutationEngine().propose(blueprints, n=2))
        verify_pending(store, workers=1)
        assert store.blueprints.set_split(held, "eval") == 2
        counts = export(store, fmt, tmp_path / "pairs.jsonl").counts
        stored = store.counts().blueprints
    assert counts["skipped_plan"] == 1 and counts["held_out_eval"] == 2
    # The plan left in has proposals but no gold: it is counted as a plan, not again as no gold.
    assert "skipped_no_gold" not in counts
    assert sum(counts.get(key, 0) for key in BLUEPRINT_COUNTS) == stored == len(blueprints)
