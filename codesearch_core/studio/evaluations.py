"""The Evaluations page's view-model: eval runs side by side (a table, and long-form rows per
category for the charts), two runs compared blueprint by blueprint, and one answer laid out for the
review card's diff view (its call against the reference, its findings against the expected spans).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from codesearch_core.export import METRICS, compare
from codesearch_core.grading import diff_findings
from codesearch_core.gym import AGENT_ENGINE_PREFIX
from codesearch_core.models import Blueprint
from codesearch_core.store import EvalAnswer, EvalRun, Store
from codesearch_core.studio.diff import FindingRow, finding_rows

CATEGORIES: Final = {"by_tag": "tag", "by_language": "language"}
#: The metrics a bar chart shows (counts, like PCRE2-rule violations or an agent's mean turns, are
#: not on a 0-1 scale); an agent run's own rates after the single-call ones (a single-call run has
#: no value for them, and is left out of their chart).
CHART_METRICS: Final = (
    *(m for m in METRICS if m != "pcre2_violations"),
    "success_rate",
    "submit_rate",
    "invalid_call_rate",
)


def overall_table(runs: Sequence[EvalRun]) -> list[dict[str, Any]]:
    """One row per run: what it was, then its overall metrics."""
    return [
        {
            "run": run.label,
            "engine": run.engine,
            "model": run.model,
            "n": run.n,
            "blueprints set": run.blueprints,
            **run.summary.get("overall", {}),
        }
        for run in runs
    ]


def category_rows(runs: Sequence[EvalRun], category: str, metric: str) -> list[dict[str, Any]]:
    """Long-form rows (run, category, value, blueprints) for a grouped bar chart; categories
    without a value for the metric (no answers) are left out."""
    rows = []
    for run in runs:
        for name, summary in run.summary.get(category, {}).items():
            value = summary.get(metric)
            if value is not None:
                rows.append(
                    {
                        "run": run.label,
                        "category": name,
                        "value": float(value),
                        "blueprints": int(summary.get("blueprints", 0)),
                    }
                )
    return rows


def category_chart(rows: Sequence[Mapping[str, Any]], metric: str) -> Any:
    """An Altair chart of `category_rows`: one bar per run within each category."""
    import altair as alt
    import pandas as pd

    low = min(0.0, *(float(r["value"]) for r in rows)) if rows else 0.0
    height = max(
        120, 22 * len({r["category"] for r in rows}) * max(1, len({r["run"] for r in rows}))
    )
    return (
        alt.Chart(pd.DataFrame(list(rows)))
        .mark_bar()
        .encode(
            y=alt.Y("category:N", title=None, sort="ascending"),
            x=alt.X("value:Q", title=metric, scale=alt.Scale(domain=[low, 1])),
            yOffset="run:N",
            color=alt.Color("run:N", legend=alt.Legend(orient="bottom", labelLimit=400)),
            tooltip=["run", "category", "blueprints", alt.Tooltip("value:Q", format=".3f")],
        )
        .properties(height=height)
    )


@dataclass(frozen=True, slots=True)
class Comparison:
    """Run `b` against run `a`, blueprint by blueprint (the ones both answered)."""

    rows: tuple[dict[str, Any], ...]
    better: int
    worse: int
    same: int
    only_a: int
    only_b: int


def comparison(a: EvalRun, b: EvalRun) -> Comparison:
    rows = tuple(compare(a, b))
    ids_a = {i.blueprint_id for i in a.items}
    ids_b = {i.blueprint_id for i in b.items}
    verdicts = [r["verdict"] for r in rows]
    return Comparison(
        rows=rows,
        better=verdicts.count("better"),
        worse=verdicts.count("worse"),
        same=verdicts.count("same"),
        only_a=len(ids_a - ids_b),
        only_b=len(ids_b - ids_a),
    )


@dataclass(frozen=True, slots=True)
class AnswerView:
    """One eval answer as the review card shows it. `blueprint` is the blueprint the answer was
    graded against (kept with the run; for a run stored without it, the store's, None when the
    store has none: the answer can be listed, not diffed); `rows` the findings diff against its
    expected spans."""

    run_id: str
    blueprint_id: str
    index: int
    answer: EvalAnswer
    blueprint: Blueprint | None
    rows: tuple[FindingRow, ...]

    @property
    def title(self) -> str:
        a = self.answer
        return f"Answer {self.index + 1}: reward {a.reward:.3f}, span F1 {a.span_f1:.3f}"


def answer_views(store: Store, run: EvalRun, blueprint_id: str) -> list[AnswerView]:
    """Every answer of the run to one blueprint, ready for the diff view."""
    item = next((i for i in run.items if i.blueprint_id == blueprint_id), None)
    if item is None:
        return []
    bp = item.blueprint or store.get_blueprint(blueprint_id)
    views = []
    for index, answer in enumerate(item.answers):
        rows: tuple[FindingRow, ...] = ()
        if bp is not None and answer.call is not None and not answer.error:
            rows = finding_rows(diff_findings(answer.findings, bp.expected))
        views.append(AnswerView(run.run_id, blueprint_id, index, answer, bp, rows))
    return views


@dataclass(frozen=True, slots=True)
class EpisodeCall:
    """One call of an agent's episode as the page shows it: what was called, what it was told."""

    turn: int
    name: str
    arguments: Any
    observation: str
    error: str


def episode_calls(run: EvalRun, answer: EvalAnswer) -> list[EpisodeCall] | None:
    """The calls of an agent run's answer (an episode, `gym.evaluate`: its trajectory is the
    answer's text), turn by turn; None for a single-call run's answer."""
    if not run.engine.startswith(AGENT_ENGINE_PREFIX):
        return None
    try:
        trajectory = json.loads(answer.raw_text)
        return [
            EpisodeCall(
                t + 1,
                str(c["name"]),
                c.get("arguments"),
                str(c.get("observation", "")),
                str(c.get("error", "")),
            )
            for t, turn in enumerate(trajectory["turns"])
            for c in turn
        ]
    except (ValueError, KeyError, TypeError):
        return None


def item_choices(run: EvalRun, changes: Sequence[Mapping[str, Any]] = ()) -> list[str]:
    """The run's blueprints for the answer picker: those a comparison changed most first (worse,
    then better), then the rest by id."""
    moved = [str(r["blueprint_id"]) for r in changes if r.get("verdict") != "same"]
    rest = sorted(i.blueprint_id for i in run.items if i.blueprint_id not in set(moved))
    return [*moved, *rest]
