"""The Overview's parts every queue shares (the queue selector, the agreement figures, the
decisions chart, the review settings) and the figures of a queue other than Proposals: its
progress, the button that opens it on the Review page, its decisions over time, the QA queue's
measured error rate (per data set), its agreement and its reviewers (issue 39). The Proposals'
figures are `pages/overview.py`'s own."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from codesearch_core import studio
from codesearch_core.access import Action
from codesearch_core.errors import CodesearchError
from codesearch_core.store import (
    EPISODE,
    KINDS,
    PROPOSAL,
    QA,
    Agreement,
    QueueStats,
    ReviewSettings,
    Store,
)
from pages import _history, _queue_frame, _shared

#: The last settings change's effect on the items' states, said once after the page reruns.
SETTINGS_SAID = "overview:settings_said"
SETTINGS_PENDING = (
    "overview:settings_pending"  # settings that reopen or settle items, not saved yet
)

#: The queue selector's widget key (its value: the queue's name in the address).
QUEUE = "overview:queue"
#: Each kind by its name in the address, as the Review page's picker names it ("episodes"),
#: Proposals first (the registry's order).
QUEUE_OF_NAME = {studio.QUEUE_NAMES[kind].lower(): kind for kind in KINDS}
PROPOSALS = studio.QUEUE_NAMES[PROPOSAL].lower()
#: The command that fills an empty queue, said where it is empty.
FILLED_BY = {EPISODE: studio.ROLLOUTS_COMMAND, QA: studio.QA_SAMPLE_COMMAND}


def pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0%}"


def choice() -> str:
    """The queue selector (its name in the address, "proposals" when Proposals), kept in the
    address so that a link or a reload shows the same queue."""
    names = list(QUEUE_OF_NAME)
    _history.follow_address(_queue_frame.QUEUE_PARAM, QUEUE, names)
    if st.session_state.get(QUEUE) not in names:
        # A new visit (the widget's state is gone once another page ran): the address says which.
        in_address = st.query_params.get(_queue_frame.QUEUE_PARAM)
        st.session_state[QUEUE] = in_address if in_address in names else PROPOSALS
    picked = st.segmented_control(
        "Queue", names, key=QUEUE, required=True,
        format_func=lambda q: studio.QUEUE_NAMES[QUEUE_OF_NAME[q]],
    ) or PROPOSALS  # fmt: skip
    _history.write_address(_queue_frame.QUEUE_PARAM, None if picked == PROPOSALS else picked)
    return str(picked)


def agreement_metrics(reviews_per_item: int, a: Agreement, items_help: str) -> None:
    """A queue's agreement as four figures, said to be over blind votes (issue 39)."""
    t1, t2, t3, t4 = st.columns(4)
    t1.metric("Reviews per item", reviews_per_item)
    t2.metric("Items with 2+ reviews", f"{a.items:,}", help=items_help)
    t3.metric("Percent agreement", pct(a.percent), help="items on which every review is the same")
    t4.metric(
        "Krippendorff's alpha", "n/a" if a.alpha is None else f"{a.alpha:.2f}",
        help="chance-corrected agreement (nominal; 1 perfect, 0 chance); n/a with fewer than two "
        "items or a single label",
    )  # fmt: skip
    st.caption(
        "Over blind votes: a reviewer sees the others' votes on an item only after casting their "
        f"own. {a.conflicts:,} in conflict now."
    )


ACTION_COLOURS = alt.Scale(
    domain=["accept", "reject", "skip", "undo"],
    range=["#2f9e44", "#e03131", "#868e96", "#f59f00"],
)


def picked_mark(chart: alt.Chart, key: str) -> Mapping[str, Any] | None:
    """Draw `chart`; the values of the mark clicked in this run, or None."""
    event = st.altair_chart(
        chart, key=key, on_select="rerun", selection_mode="pick", width="stretch"
    )
    picked = (event.selection.get("pick") if event else None) or []
    return picked[0] if picked else None


def decisions_chart(
    per_day: tuple[tuple[date, str, int], ...], key: str
) -> Mapping[str, Any] | None:
    """A queue's decision events per day as bars by action; the bar clicked, or None."""
    frame = pd.DataFrame(
        [(d.isoformat(), a, n) for d, a, n in per_day], columns=["day", "action", "events"]
    )
    if frame.empty:
        st.caption("No decisions yet.")
        return None
    chart = (
        alt.Chart(frame)
        .mark_bar(size=28)
        .encode(
            x=alt.X("day:O", title=None, axis=alt.Axis(labelAngle=0)),
            y=alt.Y("events:Q", title="events", axis=alt.Axis(tickMinStep=1)),
            color=alt.Color("action:N", scale=ACTION_COLOURS, legend=alt.Legend(orient="top")),
            tooltip=["day:O", "action:N", "events:Q"],
        )
        .add_params(alt.selection_point(name="pick", fields=["action"]))
        .properties(height=260)
    )
    return picked_mark(chart, key)


def settings_form(current: ReviewSettings) -> None:
    """How many reviews an item needs and how long a lease lasts (every queue's; an admin's)."""
    with st.form("review_settings", border=False):
        f1, f2, f3 = st.columns([1, 1, 1], vertical_alignment="bottom")
        n = f1.number_input("Reviews per item", 1, ReviewSettings.MAX_REVIEWS,
                            current.reviews_per_item, key="rs:n")  # fmt: skip
        minutes = f2.number_input(
            "Lease (minutes)", 0.5, ReviewSettings.MAX_LEASE_MINUTES, float(current.lease_minutes),
            step=0.5, key="rs:lease",
            help="how long an item shown to a reviewer stays away from the others",
        )  # fmt: skip
        not_admin = _shared.denial(Action.SETTINGS)
        if f3.form_submit_button("Save review settings", icon=":material/save:",
                                 disabled=bool(not_admin), help=not_admin):  # fmt: skip
            wanted = ReviewSettings(int(n), float(minutes))
            try:
                # A count that reopens or settles items is said first, and saved on a second
                # click; one that changes no item's state is saved at once.
                would = studio.settings_change(_shared.get_store().preview_review_settings(wanted),
                                               wanted.reviews_per_item, would=True)  # fmt: skip
                if would:
                    # Kept with the settings: a dry run restates every item, once is enough.
                    st.session_state[SETTINGS_PENDING] = (wanted, would)
                else:
                    _save_settings(wanted)
            except CodesearchError as err:
                st.error(str(err), icon=":material/error:")
    if (said_pending := st.session_state.get(SETTINGS_PENDING)) is not None:
        pending, would = said_pending
        st.warning(would, icon=":material/published_with_changes:")
        b1, b2, _ = st.columns([1, 1, 2])
        if b1.button("Save anyway", icon=":material/save:", key="rs:confirm", type="primary"):
            st.session_state.pop(SETTINGS_PENDING, None)
            _save_settings(pending)
        if b2.button("Cancel", key="rs:cancel"):
            st.session_state.pop(SETTINGS_PENDING, None)
            st.rerun()
    if said := st.session_state.pop(SETTINGS_SAID, ""):
        # Said after the rerun, under the form: what the new count did to settled items.
        st.warning(said, icon=":material/published_with_changes:")


def _save_settings(wanted: ReviewSettings) -> None:
    try:
        opened = _shared.get_store().set_review_settings(wanted)
    except CodesearchError as err:
        st.error(str(err), icon=":material/error:")
        return
    st.session_state[SETTINGS_SAID] = studio.settings_change(opened, wanted.reviews_per_item)
    st.rerun()


def _open_queue(name: str) -> None:
    """The Review page on this queue (its picker reads the queue from the address)."""
    _shared.go_to(_shared.PAGE_REVIEW, params={_queue_frame.QUEUE_PARAM: name})


def _qa_error_rate(q: QueueStats) -> None:
    """The QA queue's measured error rate, and each data set's when it holds several."""
    overall, per_set = studio.error_rates(q)
    st.markdown(f"**Measured error rate** · {overall.interval}")
    st.caption(
        "Incorrect (rejected) of judged (settled) QA items, with the 95% Wilson interval the data "
        "set card uses; open items and conflicts are no verdict yet."
    )
    if len(per_set) > 1:
        st.dataframe(
            pd.DataFrame(
                [
                    {"data set": r.label, "id": r.dataset_id, "judged": r.judged,
                     "incorrect": r.incorrect, "error rate": pct(r.rate),
                     "95% interval": "n/a" if r.low is None or r.high is None
                     else f"{r.low:.0%}-{r.high:.0%}"}
                    for r in per_set
                ]
            ),
            hide_index=True,
        )  # fmt: skip


@st.fragment
def _team(store: Store, kind: str, q: QueueStats) -> None:
    """One queue's reviewers: its agreement and each reviewer's votes, then the settings."""
    st.subheader("Reviewers", anchor=False)
    current = store.review_settings()
    many = KINDS[kind].noun[1]
    # Drafts and Drift are settled by one review whatever the settings say.
    reviews = current.reviews_per_item if KINDS[kind].shared_reviews else 1
    agreement_metrics(reviews, q.agreement, many)
    if q.reviewers:
        st.dataframe(
            pd.DataFrame(q.reviewers, columns=["reviewer", "accepted", "rejected", "skipped"]),
            hide_index=True,
        )
    else:
        st.caption(f"No votes on {many} yet.")
    settings_form(current)


def show(store: Store, name: str) -> None:
    """A queue other than Proposals: its progress, the button to review it, its decisions over
    time, the QA queue's error rate, and its reviewers."""
    kind = QUEUE_OF_NAME[name]
    q = store.queue(kind).stats()
    title, many = studio.QUEUE_NAMES[kind], KINDS[kind].noun[1]
    m = st.columns(5)
    m[0].metric(title, f"{q.items:,}", help=f"{many} in the queue")
    m[1].metric("Open", f"{q.open:,}", help="no decision yet, or waiting for more reviews")
    m[2].metric("Accepted", f"{q.accepted:,}", help="correct" if kind == QA else None)
    m[3].metric("Rejected", f"{q.rejected:,}", help="incorrect" if kind == QA else None)
    m[4].metric("In conflict", f"{q.conflicts:,}", help="reviewers disagree: a lead settles it")
    if q.items:
        st.progress(q.settled / q.items, text=f"Settled: {q.settled:,} of {q.items:,} {many}")
    else:
        command = FILLED_BY.get(kind)
        st.info(f"No {many} in the queue yet." + (f" `{command}` adds some." if command else ""),
                icon=":material/lightbulb:")  # fmt: skip
    if st.button(f"Review {title}", icon=":material/fact_check:", type="primary",
                 key="overview:open_queue", disabled=not q.items):  # fmt: skip
        _open_queue(name)
    if kind == QA:
        _qa_error_rate(q)
    st.markdown("**Decisions over time** · click a bar to open the queue")
    if decisions_chart(q.decisions_per_day, f"chart_days:{kind}") is not None:
        _open_queue(name)
    _team(store, kind, q)
