"""Evaluation runs: an engine's answers on a blueprint set, run and graded by the real tools,
summarized per tag and language, stored in the store, compared; an engine that answers nothing and
an empty set are clear errors; runs the first version wrote as JSON files are imported once."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from export_support import seed_blueprints

from codesearch_core.engines.mutations import MutationEngine
from codesearch_core.errors import EngineError, InputFileError
from codesearch_core.export.evaluation import compare, evaluate, import_json_runs
from codesearch_core.models import Proposal
from codesearch_core.store import EvalRun, Store


class ReferenceEngine:
    """An engine that always answers with the reference call: the ceiling of every metric."""

    name = "reference"
    model = "oracle"

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


class DeadEngine:
    """An engine whose every request failed before any text came back (a server gone away)."""

    name = "openai"
    model = "gone"

    def propose(self, blueprints: list, *, n: int = 1, **_: object) -> list[Proposal]:  # type: ignore[type-arg]
        return [
            Proposal(bp.id, self.name, self.model, "", None, False, error="connection refused")
            for bp in blueprints
        ]


def test_the_reference_scores_full_marks_and_mutations_less_per_tag(tmp_path: Path) -> None:
    blueprints = seed_blueprints()
    best = evaluate(ReferenceEngine(), blueprints, n=1, label="seeds")  # type: ignore[arg-type]
    worse = evaluate(MutationEngine(), blueprints, n=2, label="seeds")
    overall = best.summary["overall"]
    assert overall["blueprints"] == len(blueprints) - 1  # the plan is left out, and counted
    assert best.summary["left_out"]["plan"]["blueprints"] == 1
    assert "several calls" in best.summary["left_out"]["plan"]["reason"]
    assert overall["mean_reward"] == pytest.approx(1.0) and overall["pass_at_k"] == 1.0
    assert overall["tool_accuracy"] == 1.0 and overall["pcre2_violations"] == 0
    assert worse.summary["overall"]["mean_reward"] < 1.0
    assert set(worse.summary["by_tag"]) == {
        t for bp in blueprints if bp.plan is None for t in bp.tags
    }
    # Each answer keeps what its call found: the reference's findings are the expected spans.
    first = best.items[0]
    expected = next(bp for bp in blueprints if bp.id == first.blueprint_id).expected
    assert {f.span for f in first.answers[0].findings} >= set(expected)

    with Store(tmp_path / "s.duckdb") as store:
        assert store.evals.save(best) and store.evals.save(worse)
        assert not store.evals.save(best)  # saving a run twice stores it once
        listed = store.evals.list()
        assert [r.engine for r in listed] == ["mutations", "reference"]  # newest first
        assert listed[0].items == ()  # listing reads the summaries only
        runs = {r.engine: store.evals.get(r.run_id) for r in listed}
        trail = [e.action for e in store.audit_log()]
    stored_best = runs["reference"]
    assert stored_best is not None and stored_best.items == best.items
    assert stored_best.summary == json.loads(json.dumps(best.summary))
    assert trail.count("eval.run") == 2
    stored_worse = runs["mutations"]
    assert stored_worse is not None
    changes = compare(stored_best, stored_worse)
    assert len(changes) == overall["blueprints"] and all(c["change"] <= 0 for c in changes)
    assert {c["verdict"] for c in changes} <= {"worse", "same"}


def test_an_empty_set_is_a_clear_error() -> None:
    with pytest.raises(InputFileError, match="nothing to evaluate: the blueprint set is empty"):
        evaluate(MutationEngine(), [])
    with pytest.raises(InputFileError, match="all plans"):
        evaluate(MutationEngine(), [bp for bp in seed_blueprints() if bp.plan is not None])


def test_an_engine_that_answers_nothing_is_an_error_not_a_run_of_zeros() -> None:
    with pytest.raises(EngineError, match="gave no answer to any blueprint: connection refused"):
        evaluate(DeadEngine(), seed_blueprints())  # type: ignore[arg-type]


def test_runs_saved_as_json_by_the_first_version_are_imported_once(tmp_path: Path) -> None:
    run = evaluate(ReferenceEngine(), seed_blueprints()[:2], label="seeds")  # type: ignore[arg-type]
    folder = tmp_path / "evals"
    folder.mkdir()
    # The first version's file: the run as a dict, answers without findings, no corpus.
    legacy = {
        "run_id": run.run_id,
        "engine": run.engine,
        "model": run.model,
        "n": run.n,
        "blueprints": run.blueprints,
        "created_at": run.created_at + "+00:00",
        "summary": run.summary,
        "items": [
            {
                "blueprint_id": i.blueprint_id,
                "tags": list(i.tags),
                "language": i.language,
                "reference_tool": i.reference_tool,
                "answers": [
                    {k: v for k, v in a.to_dict().items() if k not in ("findings", "truncated")}
                    for a in i.answers
                ],
            }
            for i in run.items
        ],
    }
    (folder / f"{run.run_id}.json").write_text(json.dumps(legacy), encoding="utf-8")
    (folder / "notes.json").write_text("[]", encoding="utf-8")
    with Store(tmp_path / "s.duckdb") as store:
        report = import_json_runs(store, folder)
        again = import_json_runs(store, folder)
        stored = store.evals.get(run.run_id)
    assert report.imported == (run.run_id,) and report.unreadable == ("notes.json",)
    assert again.imported == () and again.already == (run.run_id,)
    assert isinstance(stored, EvalRun) and stored.created_at == run.created_at
    assert [i.best_reward for i in stored.items] == [i.best_reward for i in run.items]
    assert stored.items[0].answers[0] == replace(run.items[0].answers[0], findings=())
