"""The Evaluations page's view-model on real runs: the mutation engine and the reference answers
on seed blueprints, run by the real tools, stored in a real store; a table and chart rows per
category (one-call and agent runs apart, a long list cut to its top), two runs compared item by
item, and answers laid out for the review card's diff view."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from codesearch_core import studio
from codesearch_core.corpora import corpus_root, load_seed_blueprints
from codesearch_core.engines import MutationEngine
from codesearch_core.export import evaluate
from codesearch_core.gym import ReferencePolicy, Task, evaluate_agent
from codesearch_core.models import Proposal
from codesearch_core.store import Store
from codesearch_core.studio import FindingStatus


class ReferenceEngine:
    name = "reference"
    model = "oracle"

    def propose(self, blueprints: list, *, n: int = 1, **_: object) -> list[Proposal]:  # type: ignore[type-arg]
        return [
            Proposal(bp.id, self.name, self.model, bp.reference_call.to_json(),
                     bp.reference_call, True)
            for bp in blueprints
        ]  # fmt: skip


def test_runs_side_by_side_compared_and_opened_in_the_diff_view(tmp_path: Path) -> None:
    seeds = [bp for bp in load_seed_blueprints() if "lang:go" in bp.tags][:4]
    with Store(tmp_path / "s.duckdb") as store:
        store.blueprints.add(seeds)
        floor = evaluate(MutationEngine(), seeds, n=2, label="go")
        ceiling = evaluate(ReferenceEngine(), seeds, label="go")  # type: ignore[arg-type]
        store.evals.save(floor)
        store.evals.save(ceiling)
        runs = store.evals.list()
        table = studio.overall_table(runs)
        assert [r["run"] for r in table] == [r.label for r in runs]
        assert [r["kind"] for r in table] == ["one-call", "one-call"]
        # Figures in words, the reward first (issue 39: it was cut off at 900 px).
        assert list(table[0])[:3] == ["run", "kind", "mean reward"]
        assert table[0]["mean reward"] == 1.0 and table[0]["blueprints"] == len(seeds)
        assert all("_" not in column for column in table[0] if column != "run")

        rows = studio.category_rows(runs, "by_language", "mean_reward")
        assert {r["category"] for r in rows} == {"go"} and len(rows) == 2
        chart = studio.category_chart(rows, "mean_reward").to_dict()
        assert chart["mark"]["type"] == "bar" and chart["encoding"]["yOffset"]["field"] == "run"

        a, b = (store.evals.get(r.run_id) for r in (runs[1], runs[0]))
        assert a is not None and b is not None
        cmp = studio.comparison(a, b)  # the reference against the mutations
        assert cmp.better + cmp.same == len(seeds) and cmp.worse == 0
        assert cmp.only_a == cmp.only_b == 0
        choices = studio.item_choices(b, cmp.rows)
        assert sorted(choices) == sorted(bp.id for bp in seeds)
        assert choices[: cmp.better] == [
            r["blueprint_id"] for r in cmp.rows if r["verdict"] != "same"
        ]

        (best,) = studio.answer_views(store, b, seeds[0].id)
        assert best.blueprint is not None and best.blueprint.id == seeds[0].id
        assert best.answer.reward == 1.0
        assert best.rows and {r.status for r in best.rows} == {FindingStatus.HIT}
        assert best.title.startswith("Answer 1: reward 1.000")
        worse = studio.answer_views(store, a, seeds[0].id)
        assert len(worse) == len(next(i for i in a.items if i.blueprint_id == seeds[0].id).answers)
        assert studio.answer_views(store, a, "no-such-blueprint") == []


def test_an_answer_is_diffed_against_the_blueprint_it_was_graded_against(tmp_path: Path) -> None:
    single = [b for b in load_seed_blueprints() if b.plan is None]
    bp = next(b for b in single if len(set(b.expected)) >= 2)
    other = next(b for b in single if b.id != bp.id)
    with Store(tmp_path / "s.duckdb") as store:
        store.blueprints.add([bp])  # `other` is evaluated from a file: never in the store
        run = evaluate(ReferenceEngine(), [bp, other], label="file")  # type: ignore[arg-type]
        store.evals.save(run)
        # The blueprint's expected spans are edited after the run.
        assert store.blueprints.upsert(replace(bp, expected=bp.expected[:1])) == "updated"
        stored = store.evals.get(run.run_id)
        assert stored is not None
        (view,) = studio.answer_views(store, stored, bp.id)
        (outside,) = studio.answer_views(store, stored, other.id)
    assert view.blueprint is not None and view.blueprint.expected == bp.expected
    assert len(view.rows) == len(set(bp.expected)) and view.answer.reward == 1.0
    assert {r.status for r in view.rows} == {FindingStatus.HIT}
    assert outside.blueprint is not None and outside.rows


def test_the_category_chart_draws_whole_labels_and_a_few_ticks() -> None:
    # Issue 29: labels such as "tag:adversarial:case" were cut, and the metric axis had 29 ticks.
    rows = [
        {"run": run, "category": f"tag:adversarial:case-{i}-with-a-long-name", "value": v,
         "blueprints": 3}
        for i in range(6) for run, v in (("a", 0.25), ("b", 0.75))
    ]  # fmt: skip
    spec = studio.category_chart(rows, "mean_reward").to_dict()
    y_axis, x_axis = spec["encoding"]["y"]["axis"], spec["encoding"]["x"]["axis"]
    assert y_axis["labelLimit"] >= 8 * max(len(r["category"]) for r in rows)
    assert x_axis["tickCount"] <= 6


def test_a_chart_of_a_few_bars_keeps_room_for_them_beside_its_axis_and_legend() -> None:
    rows = [{"run": run, "category": "tag:x", "value": 0.5, "blueprints": 1} for run in "ab"]
    spec = studio.category_chart(rows, "mean_reward").to_dict()
    assert spec["height"] >= 2 * 22 + 60 + 2 * 20  # bars, the axis, a legend row per run


def test_agent_and_one_call_runs_are_charted_apart_and_a_long_category_list_is_cut_to_its_top(
    tmp_path: Path,
) -> None:
    seeds = [bp for bp in load_seed_blueprints() if bp.plan is None and bp.corpus == "webshop"]
    tasks = [Task(bp, corpus_root(bp.corpus)) for bp in seeds]
    one_call = evaluate(ReferenceEngine(), seeds, label="one")  # type: ignore[arg-type]
    agent = evaluate_agent(ReferencePolicy(), tasks, label="agent")
    kinds = studio.runs_by_kind([agent, one_call])
    assert list(kinds) == ["one-call", "agent"]
    assert kinds["agent"] == [agent] and kinds["one-call"] == [one_call]
    # An agent's own figures are charted for agent runs only.
    assert studio.category_rows(kinds["one-call"], "by_tag", "success_rate") == []
    assert studio.category_rows(kinds["agent"], "by_tag", "success_rate")
    every = studio.category_rows([one_call], "by_tag", "mean_reward")
    tags = studio.category_count([one_call], "by_tag")
    assert tags == len({r["category"] for r in every}) > 3
    top = studio.category_rows([one_call], "by_tag", "mean_reward", top=3)
    kept = {r["category"] for r in top}
    assert len(kept) == 3
    # The ones kept are those with the most blueprints.
    size = {r["category"]: r["blueprints"] for r in every}
    assert min(size[c] for c in kept) >= max(size[c] for c in size if c not in kept)
    spec = studio.category_chart(top, "success_rate").to_dict()
    assert spec["encoding"]["x"]["title"] == "success (reward >= 0.9)"
    assert spec["encoding"]["color"]["legend"]["orient"] == "top"
