"""The Evaluations page's view-model: eval runs side by side (a table, and long-form rows per
category for the charts), two runs compared blueprint by blueprint and side by side on one, and one
answer laid out for the review card's diff view (its call against the reference, its findings
against the expected spans); an agent run's answer is a trajectory (`studio.trajectory`), and two
agent runs' best episodes on one blueprint are drawn side by side (`best_episodes`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from codesearch_core.export import METRICS, compare
from codesearch_core.grading import diff_findings, line_coverage
from codesearch_core.models import Blueprint
from codesearch_core.store import EvalAnswer, EvalItem, EvalRun, Store
from codesearch_core.studio.diff import FindingRow, finding_rows
from codesearch_core.studio.trajectory import Trajectory, answer_trajectory, is_agent_run

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


#: Every figure of a run's summary in words, in the order a reader scans them: the reward first.
METRIC_WORDS: Final = {
    "mean_reward": "mean reward",
    "success_rate": "success (reward >= 0.9)",
    "mean_span_f1": "span F1",
    "mean_precision": "precision",
    "mean_recall": "recall",
    "tool_accuracy": "right tool",
    "parse_rate": "parsed",
    "repair_rate": "repaired",
    "pass_at_k": "pass@k",
    "submit_rate": "submitted",
    "invalid_call_rate": "invalid calls",
    "mean_turns": "turns",
    "mean_calls": "calls",
    "mean_calls_per_turn": "calls a turn",
    "mean_evidence_drop": "evidence dropped",
    "pcre2_violations": "PCRE2 rule broken",
    "blueprints": "blueprints",
    "answers": "answers",
    "episodes": "episodes",
    "unparsed": "unparsed",
}
#: A chart of more categories than this shows the ones with the most blueprints (a reader asks
#: for all of them): 47 tags made a chart taller than the screen, its legend far below.
CHART_TOP: Final = 15
#: The two kinds of run, charted apart: a one-call run's reward and an agent's are not one scale.
RUN_KINDS: Final = {"one-call": "One-call runs", "agent": "Agent runs"}


def metric_words(key: str) -> str:
    """A summary figure's name in words (an unknown one with its underscores as spaces)."""
    return METRIC_WORDS.get(key, key.replace("_", " "))


def run_kind(run: EvalRun) -> str:
    """'agent' (episodes in the gym) or 'one-call' (one tool call an answer)."""
    return "agent" if is_agent_run(run) else "one-call"


def overall_table(runs: Sequence[EvalRun]) -> list[dict[str, Any]]:
    """One row per run: its label and kind, then its overall figures in words, the reward first
    (the engine, model and set are in the label), rounded to what a reader compares."""
    rows = []
    for run in runs:
        overall = run.summary.get("overall", {})
        known = [k for k in METRIC_WORDS if k in overall]
        rest = sorted(k for k in overall if k not in METRIC_WORDS)
        row: dict[str, Any] = {"run": run.label, "kind": run_kind(run)}
        for key in (*known, *rest):
            value = overall[key]
            row[metric_words(key)] = round(value, 3) if isinstance(value, float) else value
        rows.append(row)
    return rows


def runs_by_kind(runs: Sequence[EvalRun]) -> dict[str, list[EvalRun]]:
    """The runs of each kind present (`RUN_KINDS`' order), for a chart each."""
    out: dict[str, list[EvalRun]] = {}
    for kind in RUN_KINDS:
        if of_kind := [r for r in runs if run_kind(r) == kind]:
            out[kind] = of_kind
    return out


def category_rows(
    runs: Sequence[EvalRun], category: str, metric: str, *, top: int | None = None
) -> list[dict[str, Any]]:
    """Long-form rows (run, category, value, blueprints) for a grouped bar chart; categories
    without a value for the metric (no answers) are left out. `top`: only the categories with
    the most blueprints (over the runs), at most that many."""
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
                        "blueprints": int(summary.get("blueprints", summary.get("episodes", 0))),
                    }
                )
    if top is not None:
        size: dict[str, int] = {}
        for r in rows:
            size[r["category"]] = max(size.get(r["category"], 0), r["blueprints"])
        kept = set(sorted(size, key=lambda c: (-size[c], c))[:top])
        rows = [r for r in rows if r["category"] in kept]
    return rows


def category_count(runs: Sequence[EvalRun], category: str) -> int:
    """How many categories (tags, languages) the runs have."""
    return len({name for run in runs for name in run.summary.get(category, {})})


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
                title=metric_words(metric),
                scale=alt.Scale(domain=[low, 1]),
                axis=alt.Axis(tickCount=METRIC_TICKS, format=".1f"),
            ),
            yOffset="run:N",
            # The legend above the bars: below a tall chart it is off the screen.
            color=alt.Color("run:N", legend=alt.Legend(orient="top", columns=1, labelLimit=400)),
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
    bp = item.blueprint or store.blueprints.get(blueprint_id)
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
    if not is_agent_run(run):
        return 1, 1
    try:
        info = json.loads(answer.raw_text)["info"]
        return int(info["turns"]), int(info["calls"])
    except (ValueError, KeyError, TypeError):
        return None, None


def _best_answers(
    store: Store, runs: Sequence[EvalRun], blueprint_id: str
) -> tuple[dict[str, tuple[EvalItem, EvalAnswer] | None], Blueprint | None]:
    """Each run's best answer to `blueprint_id` (by label; None: no answer) and the blueprint
    they were graded against (a run's own copy first, then the store's)."""
    bp = None
    best: dict[str, tuple[EvalItem, EvalAnswer] | None] = {}
    for run in runs:
        item = next((i for i in run.items if i.blueprint_id == blueprint_id), None)
        bp = bp or (item.blueprint if item is not None else None)
        answers = item.answers if item is not None else ()
        top = max(answers, key=lambda a: a.reward) if answers else None
        best[run.label] = (item, top) if item is not None and top is not None else None
    return best, bp or store.blueprints.get(blueprint_id)


def best_episodes(
    store: Store, runs: Sequence[EvalRun], blueprint_id: str
) -> tuple[Trajectory, ...]:
    """The agent runs' best episodes on `blueprint_id` (the answers `side_by_side` reports) as
    trajectories, in the runs' order; a single-call run or a run with no answer gives none."""
    best, bp = _best_answers(store, runs, blueprint_id)
    views = []
    for run in runs:
        if (picked := best[run.label]) is not None:
            view = answer_trajectory(run, picked[0], picked[1], bp)
            if view is not None:
                views.append(view)
    return tuple(views)


def side_by_side(store: Store, runs: Sequence[EvalRun], blueprint_id: str) -> SideBySide:
    """Which run found what on `blueprint_id`, in how many turns and calls (class docstring)."""
    best_pairs, bp = _best_answers(store, runs, blueprint_id)
    best = {label: p[1] if p is not None else None for label, p in best_pairs.items()}
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
