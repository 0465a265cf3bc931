"""Overview: counts and rates at a glance, and charts that open the review queue filtered to what
was clicked. A queue selector on top (in the address, `?queue=episodes`, the names the Review
page's picker uses) shows one queue's figures: the Proposals' page as it was, or another queue's
progress, decisions, agreement and reviewers, with the QA queue's measured error rate."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from codesearch_core import studio
from codesearch_core.store import DecisionState, QueueFilters
from pages import _guidelines, _queue_overview, _shared

_shared.ensure_routed()

store = _shared.get_store()

st.title("Overview")

if (choice := _queue_overview.choice()) != _queue_overview.PROPOSALS:
    _queue_overview.show(store, choice)
    _guidelines.editor()
    st.stop()

stats = store.dashboard_stats()
c = stats.counts

m = st.columns(8)
m[0].metric("Blueprints", f"{c.blueprints:,}")
m[1].metric("Proposals", f"{c.proposals:,}", help=f"{c.executed:,} executed, {c.graded:,} graded")
m[2].metric("Valid calls", _queue_overview.pct(stats.valid_rate))
m[3].metric("Undecided", f"{c.undecided:,}")
m[4].metric("Accepted", f"{c.accepted:,}")
m[5].metric("Rejected", f"{c.rejected:,}")
m[6].metric(
    "Acceptance",
    _queue_overview.pct(stats.acceptance_rate),
    help="accepted / (accepted + rejected)",
)
m[7].metric("Mean span F1", "n/a" if stats.mean_span_f1 is None else f"{stats.mean_span_f1:.2f}")


def open_review(filters: QueueFilters) -> None:
    _shared.go_to(_shared.PAGE_REVIEW, params=studio.filters_to_params(filters))


q1, q2, q3, q4, q5 = st.columns(5)
if q1.button("Review undecided", icon=":material/fact_check:", width="stretch",
             disabled=not c.undecided):  # fmt: skip
    open_review(QueueFilters())
if q2.button("Review rejects", icon=":material/block:", width="stretch", disabled=not c.rejected):
    open_review(QueueFilters(decision=DecisionState.REJECTED))
if q3.button("Review low span F1 (< 0.5)", icon=":material/trending_down:", width="stretch",
             disabled=not c.graded):  # fmt: skip
    open_review(QueueFilters(decision=DecisionState.ANY, min_f1=0.0, max_f1=0.4999))
if q4.button("Review accepted", icon=":material/verified:", width="stretch",
             disabled=not c.accepted):  # fmt: skip
    open_review(QueueFilters(decision=DecisionState.ACCEPTED))
if q5.button(f"Conflicts ({c.conflicts})", icon=":material/gavel:", width="stretch",
             disabled=not c.conflicts, key="open_conflicts"):  # fmt: skip
    open_review(QueueFilters(decision=DecisionState.CONFLICT))


@st.fragment
def team() -> None:
    """Reviewers, their agreement, and how many reviews an item needs (shared by everyone)."""
    st.subheader("Reviewers", anchor=False)
    _queue_overview.agreement_metrics(
        stats.review_settings.reviews_per_item, stats.agreement, "proposals; other queues below"
    )
    # The figures above are the proposals'; every queue's are here (issue 39: Episodes, QA and
    # Drafts decisions were left out).
    others = [(k, g) for k, g in stats.agreement_by_queue if k != "proposal" and g.items]
    if others:
        st.dataframe(
            pd.DataFrame(
                [
                    {"queue": studio.QUEUE_NAMES.get(k, k), "items with 2+ reviews": g.items,
                     "agreement": _queue_overview.pct(g.percent),
                     "alpha": "n/a" if g.alpha is None else f"{g.alpha:.2f}",
                     "in conflict": g.conflicts}
                    for k, g in stats.agreement_by_queue
                ]
            ),
            hide_index=True,
        )  # fmt: skip
    if stats.reviewers_by_queue:
        st.dataframe(
            pd.DataFrame(
                [
                    {"reviewer": r, "queue": studio.QUEUE_NAMES.get(k, k), "accepted": acc,
                     "rejected": rej, "skipped": sk}
                    for r, k, acc, rej, sk in stats.reviewers_by_queue
                ]
            ),
            hide_index=True,
        )  # fmt: skip
    _queue_overview.settings_form(stats.review_settings)


team()
_guidelines.editor()

if not c.proposals:
    st.info(
        "No proposals yet. Make some on the **Propose** page (the built-in mutations engine needs "
        "no model), then review them here.",
        icon=":material/lightbulb:",
    )
    if st.button("Make proposals", type="primary", icon=":material/auto_awesome:"):
        _shared.go_to(_shared.PAGE_PROPOSE)
    st.stop()

DECISION_OF_ACTION = {
    "accept": DecisionState.ACCEPTED,
    "reject": DecisionState.REJECTED,
    "skip": DecisionState.SKIPPED,
    "undo": DecisionState.ANY,
}


def linked_chart(
    chart: alt.Chart, key: str, to_filters: Callable[[Mapping[str, Any]], QueueFilters]
) -> None:
    """Draw `chart`; a click on a mark opens the review queue with the filters it stands for."""
    if (mark := _queue_overview.picked_mark(chart, key)) is not None:
        open_review(to_filters(mark))


left, right = st.columns(2, gap="large")

with left:
    st.markdown("**Decisions over time** · click a bar to review those items")
    if (bar := _queue_overview.decisions_chart(stats.decisions_per_day, "chart_days")) is not None:
        open_review(QueueFilters(decision=DECISION_OF_ACTION[bar["action"]]))

with right:
    st.markdown("**Acceptance by tool and language** · accepted / (accepted + rejected)")
    acc = pd.DataFrame(
        stats.acceptance_by_tool_language, columns=["tool", "language", "accepted", "rejected"]
    )
    if acc.empty:
        st.caption("No accepts or rejects yet.")
    else:
        acc["rate"] = acc["accepted"] / (acc["accepted"] + acc["rejected"])
        chart = (
            alt.Chart(acc)
            .mark_bar()
            .encode(
                x=alt.X("language:N", title=None, sort="-y"),
                xOffset="tool:N",
                y=alt.Y(
                    "rate:Q",
                    title="acceptance",
                    axis=alt.Axis(format="%"),
                    scale=alt.Scale(domain=[0, 1]),
                ),
                color=alt.Color("tool:N", legend=alt.Legend(orient="top")),
                tooltip=[
                    "tool:N",
                    "language:N",
                    "accepted:Q",
                    "rejected:Q",
                    alt.Tooltip("rate:Q", format=".0%"),
                ],
            )
            .add_params(alt.selection_point(name="pick", fields=["tool", "language"]))
            .properties(height=260)
        )
        linked_chart(
            chart,
            "chart_acceptance",
            lambda v: QueueFilters(
                tool=v["tool"], language=v["language"], decision=DecisionState.DECIDED
            ),
        )

left, right = st.columns(2, gap="large")
with left:
    st.markdown("**Span F1 of graded proposals** · click a bucket")
    hist = pd.DataFrame(stats.span_f1_histogram, columns=["lo", "hi", "count"])
    if hist.empty or hist["count"].sum() == 0:
        st.caption("Nothing graded yet.")
    else:
        chart = (
            alt.Chart(hist)
            .mark_bar()
            .encode(
                x=alt.X("lo:Q", bin="binned", title="span F1", scale=alt.Scale(domain=[0, 1])),
                x2="hi:Q",
                y=alt.Y("count:Q", title="proposals"),
                color=alt.value("#4c6ef5"),
                tooltip=["lo:Q", "hi:Q", "count:Q"],
            )
            .add_params(alt.selection_point(name="pick", fields=["lo", "hi"]))
            .properties(height=240)
        )
        linked_chart(
            chart,
            "chart_f1",
            lambda v: QueueFilters(
                min_f1=float(v["lo"]),
                # Buckets are [lo, hi) except the last, which holds 1.0.
                max_f1=float(v["hi"]) - (1e-9 if float(v["hi"]) < 1.0 else 0.0),
                decision=DecisionState.ANY,
            ),
        )

with right:
    st.markdown("**Tool choice** · reference tool vs proposed tool")
    confusion = pd.DataFrame(stats.tool_confusion, columns=["reference", "proposed", "count"])
    if confusion.empty:
        st.caption("No proposals yet.")
    else:
        base = alt.Chart(confusion).encode(
            x=alt.X("proposed:N", title="proposed"),
            y=alt.Y("reference:N", title="reference"),
        )
        chart = (
            base.mark_rect()
            .encode(
                color=alt.Color("count:Q", scale=alt.Scale(scheme="blues"), legend=None),
                tooltip=["reference:N", "proposed:N", "count:Q"],
            )
            .add_params(alt.selection_point(name="pick", fields=["reference", "proposed"]))
            + base.mark_text(fontSize=14).encode(
                text="count:Q",
                # Light text on the dark cells, dark on the light ones.
                color=alt.condition(
                    alt.datum.count > confusion["count"].max() / 2,
                    alt.value("white"),
                    alt.value("#212529"),
                ),
            )
        ).properties(height=240)
        linked_chart(
            chart,
            "chart_confusion",
            lambda v: QueueFilters(
                tool=v["reference"], proposed_tool=v["proposed"], decision=DecisionState.ANY
            ),
        )


def kind_bars(counts: pd.DataFrame, color: str) -> alt.Chart:
    """Horizontal bars of reject counts per kind (`kind`, `rejects` columns), most frequent first."""
    chart: alt.Chart = (
        alt.Chart(counts)
        .mark_bar(color=color)
        .encode(
            y=alt.Y("kind:N", sort="-x", title=None),
            x=alt.X("rejects:Q", title="rejects", axis=alt.Axis(tickMinStep=1)),
            tooltip=["kind:N", "rejects:Q"],
        )
        .properties(height=max(120, 28 * len(counts)))
    )
    return chart


left, right = st.columns(2, gap="large")
with left:
    st.markdown("**Mutation kinds among rejects** · click to review them")
    kinds = pd.DataFrame(stats.reject_mutation_kinds, columns=["kind", "rejects"])
    if kinds.empty:
        st.caption("No rejected mutations yet.")
    else:
        chart = kind_bars(kinds, "#e03131").add_params(
            alt.selection_point(name="pick", fields=["kind"])
        )
        linked_chart(
            chart,
            "chart_mutations",
            lambda v: QueueFilters(mutation_kind=v["kind"], decision=DecisionState.REJECTED),
        )

with right:
    st.markdown("**Error kinds among rejects**")
    errors = pd.DataFrame(stats.reject_error_kinds, columns=["kind", "rejects"])
    if errors.empty:
        st.caption("No rejected item failed to run.")
    else:
        st.altair_chart(kind_bars(errors, "#f08c00"), width="stretch")
