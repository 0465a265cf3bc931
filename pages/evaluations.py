"""Evaluations: the saved eval runs (`codesearch eval`) side by side, per-category charts, and two
runs compared blueprint by blueprint."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from codesearch_core.export import METRICS, compare, evals_dir, list_runs
from pages import _shared

_shared.ensure_routed()

st.title("Evaluations")
runs = list_runs()
if not runs:
    st.info(f"No eval runs in `{evals_dir()}` yet. Make one with "
            "`uv run codesearch eval --engine mutations --blueprints seeds`.",
            icon=":material/info:")  # fmt: skip
    st.stop()

by_id = {run.run_id: run for run in runs}
chosen = st.multiselect("Runs", list(by_id), default=list(by_id)[:2], key="ev:runs")
shown = [by_id[r] for r in chosen]
if not shown:
    st.stop()

st.subheader("Overall", anchor=False)
overall = pd.DataFrame(
    {f"{r.run_id} ({r.engine}:{r.model}, n={r.n})": r.summary["overall"] for r in shown}
)
st.dataframe(overall, width="stretch")

st.subheader("By category", anchor=False)
c1, c2 = st.columns(2)
category = c1.segmented_control("Category", ["by_tag", "by_language"], default="by_tag",
                                format_func=lambda c: c.removeprefix("by_"), key="ev:cat")  # fmt: skip
metric = c2.selectbox("Metric", [m for m in METRICS if m != "pcre2_violations"], key="ev:metric")
rows = [
    {"run": r.run_id, "category": name, "value": s[metric]}
    for r in shown
    for name, s in r.summary[category or "by_tag"].items()
    if s[metric] is not None
]
if rows:
    chart = (
        alt.Chart(pd.DataFrame(rows))
        .mark_bar()
        .encode(
            y=alt.Y("category:N", title=None),
            x=alt.X(
                "value:Q",
                title=metric,
                scale=alt.Scale(domain=[min(0, *(r["value"] for r in rows)), 1]),
            ),
            yOffset="run:N",
            color=alt.Color("run:N", legend=alt.Legend(orient="bottom")),
            tooltip=["run", "category", alt.Tooltip("value:Q", format=".3f")],
        )
    )
    st.altair_chart(chart, width="stretch")

if len(shown) >= 2:
    a, b = shown[0], shown[1]
    st.subheader(f"{b.run_id} against {a.run_id}", anchor=False)
    changes = pd.DataFrame(compare(a, b))
    if not changes.empty:
        k1, k2, k3 = st.columns(3)
        k1.metric("Better", int((changes["change"] > 0).sum()))
        k2.metric("Worse", int((changes["change"] < 0).sum()))
        k3.metric("Same", int((changes["change"] == 0).sum()))
        st.dataframe(changes, width="stretch", hide_index=True)

st.subheader("Answers", anchor=False)
run = shown[0]
item_ids = [item.blueprint_id for item in run.items]
picked = st.selectbox(f"Blueprint (in {run.run_id})", item_ids, key="ev:item")
for item in run.items:
    if item.blueprint_id == picked:
        for i, answer in enumerate(item.answers, start=1):
            with st.expander(f"Answer {i}: reward {answer.reward:.3f}, span F1 {answer.span_f1:.3f}",
                             expanded=i == 1):  # fmt: skip
                st.json({"call": answer.call, "tool_ok": answer.tool_ok,
                         "pcre2_violation": answer.pcre2_violation, "error": answer.error,
                         "raw_text": answer.raw_text})  # fmt: skip
