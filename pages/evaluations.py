"""Evaluations: the stored eval runs (`codesearch eval`) side by side, charts per category, two
runs compared blueprint by blueprint and side by side on one (two agent runs' best episodes turn
against turn), and any answer opened: a single call in the review card's diff view, an agent's
episode in the trajectory view. The address names the run, the blueprint, the answer, the view and
the page of turns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import pandas as pd
import streamlit as st

from codesearch_core import studio
from pages import _answer_view, _history, _shared, _side_by_side, _trajectory

_shared.ensure_routed()


def _figures(rows: Sequence[Mapping[str, object]], index: str) -> Any:
    """Rows as a table of figures: three decimals (a table would print 1.0000), no "nan" for a blank."""
    return pd.DataFrame(list(rows)).set_index(index).style.format(precision=3, na_rep="")


store = _shared.get_store()
st.title("Evaluations")
runs = store.evals.list()
if not runs:
    st.info("No eval runs in the store yet. Make one with "
            "`uv run codesearch eval --engine mutations --blueprints seeds`.",
            icon=":material/info:")  # fmt: skip
    st.stop()

by_id = {run.run_id: run for run in runs}
# The address names a run, a blueprint and an answer (an episode for an agent run), so a link
# opens it and Back returns to the one before. A run the link names is among the runs chosen.
RUN_PARAM, BLUEPRINT_PARAM, ANSWER_PARAM, TURNS_PARAM = "run", "blueprint", "answer", "turns"
# `view=pair`: the two compared runs' best episodes side by side, not one answer.
VIEW_PARAM: Final = "view"
VIEWS: Final = {"one": "One answer", "pair": "Both runs' best episodes side by side"}
# The newest two by default, set through the session (not `default=`, which Streamlit refuses
# beside a value the session holds).
picked_runs = [r for r in st.session_state.get("ev:runs", list(by_id)[:2]) if r in by_id]
if (addressed_run := st.query_params.get(RUN_PARAM)) in by_id and addressed_run not in picked_runs:
    picked_runs.append(addressed_run)
st.session_state["ev:runs"] = picked_runs
chosen = st.multiselect("Runs", list(by_id), key="ev:runs",
                        format_func=lambda run_id: by_id[run_id].label,
                        help="Newest first. The first two chosen are compared below: the first "
                        "against the second.")  # fmt: skip
shown = [by_id[run_id] for run_id in chosen]
if not shown:
    st.stop()

st.subheader("Overall", anchor=False)
# A table, not a data frame: a few rows read whole, wrapped at 900 px rather than cut (issue 39).
st.table(_figures(studio.overall_table(shown), "run"))

st.subheader("By category", anchor=False)
c1, c2 = st.columns(2)
category = c1.segmented_control("Category", list(studio.CATEGORIES), default="by_tag",
                                format_func=lambda c: studio.CATEGORIES[c], key="ev:cat")  # fmt: skip
metric = c2.selectbox("Metric", studio.CHART_METRICS, key="ev:metric",
                      format_func=studio.metric_words)  # fmt: skip
category = category or "by_tag"
n_categories = studio.category_count(shown, category)
top = None
if n_categories > studio.CHART_TOP and not st.toggle(
    f"All {n_categories} {studio.CATEGORIES[category]}s", key="ev:all_categories"
):
    top = studio.CHART_TOP
    st.caption(f"The {top} {studio.CATEGORIES[category]}s with the most blueprints.")
# One chart per kind of run: an agent's reward (episodes, turns, a submit) and a single call's
# are not one scale.
for kind, of_kind in studio.runs_by_kind(shown).items():
    rows = studio.category_rows(of_kind, category, metric, top=top)
    st.markdown(f"**{studio.RUN_KINDS[kind]}**")
    if rows:
        st.altair_chart(studio.category_chart(rows, metric), width="stretch")
    else:
        st.caption(f"No {studio.metric_words(metric)} to chart for these runs.")

# Items are read only for the runs compared and opened: a run's summary is enough above.
changes: tuple[dict[str, object], ...] = ()
compared = baseline = None
if len(shown) >= 2:
    # The first run chosen against the second (the baseline): newest against the one before.
    compared, baseline = store.evals.get(shown[0].run_id), store.evals.get(shown[1].run_id)
    if compared is not None and baseline is not None:
        st.subheader("Blueprint by blueprint", anchor=False)
        st.caption(f"**{compared.label}** against the baseline **{baseline.label}**: each "
                   "blueprint's best reward in each run.")  # fmt: skip
        cmp = studio.comparison(baseline, compared)
        k1, k2, k3, k4 = st.columns(4)
        k1.metric("Better", cmp.better)
        k2.metric("Worse", cmp.worse)
        k3.metric("Same", cmp.same)
        k4.metric("In one run only", cmp.only_a + cmp.only_b)
        changes = cmp.rows
        if changes:
            st.dataframe(pd.DataFrame(list(changes)), width="stretch", hide_index=True,
                         column_config={"a": "baseline", "b": "compared"})  # fmt: skip

st.subheader("Answers", anchor=False)
_history.follow_address(RUN_PARAM, "ev:answer_run", [r.run_id for r in shown])
run_id = st.selectbox("Run", [r.run_id for r in shown], key="ev:answer_run",
                      format_func=lambda i: by_id[i].label)  # fmt: skip
_history.write_address(RUN_PARAM, run_id)
run = store.evals.get(run_id) if run_id else None
if run is None or not run.items:
    st.caption("This run has no answers.")
    st.stop()
choices = studio.item_choices(run, changes)
_history.follow_address(BLUEPRINT_PARAM, "ev:item", choices)
picked = st.selectbox("Blueprint", choices, key="ev:item",
                      help="Those the comparison changed come first.")  # fmt: skip
_history.write_address(BLUEPRINT_PARAM, picked)
if picked and compared is not None and baseline is not None:
    # Which run found what on this blueprint, in how many turns and calls.
    both = studio.side_by_side(store, [compared, baseline], picked)
    st.markdown("**Side by side on this blueprint** (each run's best answer)")
    # Tables, not data frames: a few rows, read whole, and their text is in the page.
    st.table(_figures(both.runs, "run"))
    if both.spans:
        st.table(pd.DataFrame(list(both.spans)).set_index("expected"))
# Two agent runs: their best episodes on this blueprint can be read turn against turn.
pair = (studio.best_episodes(store, [compared, baseline], picked)
        if picked and compared is not None and baseline is not None else ())  # fmt: skip
if len(pair) == 2:
    _history.follow_address(VIEW_PARAM, "ev:view", list(VIEWS))
    if st.session_state.get("ev:view") not in VIEWS:
        st.session_state["ev:view"] = "one"
    mode = st.segmented_control("Show", list(VIEWS), key="ev:view",
                                format_func=VIEWS.__getitem__) or "one"  # fmt: skip
    _history.write_address(VIEW_PARAM, mode)
    if mode == "pair":
        _side_by_side.show(pair[0], pair[1], key="ev:pair", page_param=TURNS_PARAM)
        st.stop()
else:
    _history.write_address(VIEW_PARAM, None)
views = studio.answer_views(store, run, picked) if picked else []
if not views:
    st.caption("No answer to this blueprint in this run.")
    st.stop()
indexes = [str(v.index) for v in views]
_history.follow_address(ANSWER_PARAM, "ev:answer", indexes)
if st.session_state.get("ev:answer") not in indexes:
    st.session_state["ev:answer"] = indexes[0]
if len(views) > 1:
    st.segmented_control("Answer", indexes, key="ev:answer",
                         format_func=lambda i: views[int(i)].title)  # fmt: skip
index = st.session_state.get("ev:answer") or indexes[0]
_history.write_address(ANSWER_PARAM, index)
view = views[int(index)]
answer, bp = view.answer, view.blueprint
item = next(i for i in run.items if i.blueprint_id == picked)
trajectory = studio.answer_trajectory(run, item, answer, bp)
st.markdown(f"**{view.title}**")
if trajectory is not None:
    _trajectory.show(trajectory, key="ev:traj", page_param=TURNS_PARAM)
elif bp is None:
    st.warning(
        f"Blueprint `{view.blueprint_id}` is not in the store, and this run did "
        "not keep it: the answer can be read, not diffed."
    )
    st.json({"call": answer.call, "raw_text": answer.raw_text, "error": answer.error})
else:
    st.caption(f"`{bp.id}` · corpus **{bp.corpus}** · {bp.language} · "
               f"tool {'right' if answer.tool_ok else 'wrong'}"
               + (" · PCRE2 rule broken" if answer.pcre2_violation else "")
               + (" · repaired" if answer.repaired else ""))  # fmt: skip
    st.markdown(f"**{bp.intent}**")
    _answer_view.calls(bp, answer.call, answer.raw_text, answer.error)
    if answer.call is not None and answer.error:
        st.error(f"**The run failed**: {answer.error}", icon=":material/error:")
    elif answer.call is not None:
        _answer_view.findings(bp.corpus, view.rows)
        if answer.truncated:
            st.caption("Only the first findings were kept with the run.")
with st.popover("Raw output"):
    st.code(answer.raw_text or "(empty)", language="text", wrap_lines=True)
