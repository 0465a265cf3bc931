"""The Evaluations page's view-model: eval runs side by side (a table, and long-form rows per
category for the charts), two runs compared blueprint by blueprint and side by side on one, and one
answer laid out for the review card's diff view (its call against the reference, its findings
against the expected spans); an agent run's answer is a trajectory (`studio.trajectory`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from codesearch_core.export import METRICS, compare
from codesearch_core.grading import diff_findings, line_coverage
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

#: The longest category label drawn whole, and how many ticks the metric axis aims at.
CATEGORY_LABEL_PX: Final = 400
METRIC_TICKS: Final = 5


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
    # Streamlit fits the whole chart (axis, legend) into `height`: the bars get 22 px each, and
    # the axis and a legend row per run come on top (a chart of a few bars was squeezed flat).
    n_runs = max(1, len({r["run"] for r in rows}))
    bars = len({r["category"] for r in rows}) * n_runs
    height = max(66, 22 * bars) + 60 + 20 * n_runs
    return (
        alt.Chart(pd.DataFrame(list(rows)))
        .mark_bar()
        .encode(
            # Whole category names (Vega cuts labels at 180 px: "tag:adversarial:ca…"), and a
            # metric axis of a few ticks (left to Vega, a wide chart had one every 0.05).
            y=alt.Y(
                "category:N",
                title=None,
                sort="ascending",
                axis=alt.Axis(labelLimit=CATEGORY_LABEL_PX),
            ),
            x=alt.X(
                "value:Q",
                title=metric,
                scale=alt.Scale(domain=[low, 1]),
                axis=alt.Axis(tickCount=METRIC_TICKS, format=".1f"),
            ),
            yOffset="run:N",
            color=alt.Color("run:N", legend=alt.Legend(orient="bottom", columns=1, labelLimit=400)),
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
class SideBySide:
    """Runs side by side on one blueprint: per run its best answer's reward, turns, calls and how
    many expected spans it found (`runs`); per expected span what each run's best answer made of
    it (`spans`: hit, partial, miss, or "no answer")."""

    runs: tuple[dict[str, Any], ...]
    spans: tuple[dict[str, Any], ...]


def _turns_and_calls(run: EvalRun, answer: EvalAnswer) -> tuple[int | None, int | None]:
    """An agent answer's turns and calls (its trajectory's info); a single call's are 1 and 1."""
    if not run.engine.startswith(AGENT_ENGINE_PREFIX):
        return 1, 1
    try:
        info = json.loads(answer.raw_text)["info"]
        return int(info["turns"]), int(info["calls"])
    except (ValueError, KeyError, TypeError):
        return None, None


def side_by_side(store: Store, runs: Sequence[EvalRun], blueprint_id: str) -> SideBySide:
    """Which run found what on `blueprint_id`, in how many turns and calls (class docstring)."""
    bp = None
    best: dict[str, EvalAnswer | None] = {}
    for run in runs:
        item = next((i for i in run.items if i.blueprint_id == blueprint_id), None)
        bp = bp or (item.blueprint if item is not None else None)
        answers = item.answers if item is not None else ()
        best[run.label] = max(answers, key=lambda a: a.reward) if answers else None
    bp = bp or store.get_blueprint(blueprint_id)
    expected = bp.expected if bp is not None else ()
    run_rows: list[dict[str, Any]] = []
    span_status: dict[str, dict[Any, str]] = {}
    for run in runs:
        answer = best[run.label]
        if answer is None:
            run_rows.append({"run": run.label, "reward": None, "turns": None, "calls": None,
                             "found": "no answer", "ended": ""})  # fmt: skip
            span_status[run.label] = {}
            continue
        diff = diff_findings(answer.findings, expected) if not answer.error else None
        status: dict[Any, str] = {}
        for found, span in diff.hits if diff is not None else ():
            partial = bool((cover := line_coverage(found, span)) and cover.partial)
            status[span] = "partial" if partial else "hit"
        span_status[run.label] = status
        turns, calls = _turns_and_calls(run, answer)
        run_rows.append(
            {
                "run": run.label,
                "reward": round(answer.reward, 3),
                "turns": turns,
                "calls": calls,
                "found": f"{len(status)} of {len(expected)} expected",
                "ended": answer.error or "answered",
            }
        )
    spans = tuple(
        {
            "expected": f"{s.path} L{s.start_line}"
            + (f"-{s.end_line}" if s.end_line != s.start_line else ""),
            **{
                label: "no answer" if best[label] is None else span_status[label].get(s, "miss")
                for label in best
            },
        }
        for s in expected
    )
    return SideBySide(tuple(run_rows), spans)


def item_choices(run: EvalRun, changes: Sequence[Mapping[str, Any]] = ()) -> list[str]:
    """The run's blueprints for the answer picker: those a comparison changed most first (worse,
    then better), then the rest by id."""
    moved = [str(r["blueprint_id"]) for r in changes if r.get("verdict") != "same"]
    rest = sorted(i.blueprint_id for i in run.items if i.blueprint_id not in set(moved))
    return [*moved, *rest]
