"""Evaluation runs: an engine's answers on a blueprint set, run and graded by the real tools,
summarized per tag and language, saved, listed and compared; the CLI prints the summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from export_support import seed_blueprints

from codesearch_core.cli import main
from codesearch_core.engines.mutations import MutationEngine
from codesearch_core.errors import InputFileError
from codesearch_core.export.evaluation import compare, evaluate, list_runs, save_run
from codesearch_core.models import Proposal


class ReferenceEngine:
    """An engine that always answers with the reference call: the ceiling of every metric."""

    name = "reference"
    model = "oracle"

    def __init__(self) -> None:
        self.blueprints = {bp.id: bp for bp in seed_blueprints()}

    def propose(self, blueprints: list, *, n: int = 1, **_: object) -> list[Proposal]:  # type: ignore[type-arg]
        return [
            Proposal(
                bp.id,
                self.name,
                self.model,
                bp.reference_call.to_json(),
                call=bp.reference_call,
                valid=True,
            )
            for bp in blueprints
            for _ in range(n)
        ]


def test_the_reference_scores_full_marks_and_mutations_less_per_tag(tmp_path: Path) -> None:
    blueprints = seed_blueprints()
    best = evaluate(ReferenceEngine(), blueprints, n=1, label="seeds")  # type: ignore[arg-type]
    worse = evaluate(MutationEngine(), blueprints, n=2, label="seeds")
    overall = best.summary["overall"]
    assert overall["blueprints"] == len(blueprints) - 1  # the plan is left out
    assert overall["mean_reward"] == pytest.approx(1.0) and overall["pass_at_k"] == 1.0
    assert overall["tool_accuracy"] == 1.0 and overall["pcre2_violations"] == 0
    assert worse.summary["overall"]["mean_reward"] < 1.0
    assert set(worse.summary["by_tag"]) == {
        t for bp in blueprints if bp.plan is None for t in bp.tags
    }
    save_run(best, tmp_path)
    save_run(worse, tmp_path)
    runs = {r.engine: r for r in list_runs(tmp_path)}
    assert runs["reference"].summary == json.loads(json.dumps(best.summary))
    changes = compare(runs["reference"], runs["mutations"])
    assert len(changes) == overall["blueprints"] and all(c["change"] <= 0 for c in changes)


def test_an_empty_set_is_a_clear_error() -> None:
    with pytest.raises(InputFileError, match="nothing to evaluate"):
        evaluate(MutationEngine(), [bp for bp in seed_blueprints() if bp.plan is not None])


def test_codesearch_eval_prints_the_summary_with_per_tag_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["eval", "--engine", "mutations", "--blueprints", "tag:adversarial:case", "--json",
                 "--out-dir", str(tmp_path)])  # fmt: skip
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["overall"]["blueprints"] > 0 and "adversarial:case" in printed["by_tag"]
    assert Path(printed["path"]).is_file()
