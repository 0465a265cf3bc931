"""A lead's bulk actions over a queue's filter, on every queue that has them: accept every item
that is safe to accept (what a single accept would refuse is left out and counted), or reject the
filter with one reason. Each shows its count and what it leaves out, asks for a confirmation, and
is one audited batch that "Undo batch" (or U on the card) takes back whole.

Proposals bulk over the Review page's queue filters (`bulk_actions`); the other queues over the
filter typed in their box (`filtered_bulk`; `pages/_queue_filter.py`), which their card follows
too. The store (`store.bulk`) decides what is in a batch; this only lays it out."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from codesearch_core import studio
from codesearch_core.access import Action
from codesearch_core.errors import CodesearchError
from codesearch_core.models import DecisionAction
from codesearch_core.store import PROPOSAL, BulkPlan, ItemFilters, QueueFilters, Store
from pages import _queue_filter, _shared

_ACCEPT, _REJECT = DecisionAction.ACCEPT, DecisionAction.REJECT


def _prefix(kind: str) -> str:
    # The Proposals panel keeps its widget keys (`bulk:accept`, ...); the others get their own.
    return "bulk" if kind == PROPOSAL else f"bulk:{kind}"


def _apply(
    store: Store,
    kind: str,
    filters: ItemFilters | None,
    plan: BulkPlan,
    reason: str,
    on_done: str,
) -> None:
    who = _shared.reviewer()
    flash = f"{_prefix(kind)}:flash"
    try:
        _, done = store.queue(kind).bulk_decide(
            filters, plan.action, who, expected=plan, reason=reason
        )
        word = "Accepted" if plan.action is _ACCEPT else "Rejected"
        st.session_state[flash] = ("success", f"{word} {len(done.item_ids)} items as one batch.")
    except CodesearchError as err:  # a stale count among them: nothing was written
        st.session_state[flash] = ("error", str(err))
    st.session_state.pop(on_done, None)  # the next bulk action is confirmed afresh


def _undo(store: Store, kind: str) -> None:
    flash = f"{_prefix(kind)}:flash"
    try:
        store.queue(kind).undo(_shared.reviewer())
        st.session_state[flash] = ("success", "Batch undone: its items are as they were.")
    except CodesearchError as err:
        st.session_state[flash] = ("error", str(err))


def _is_lead() -> bool:
    return bool(_shared.reviewer()) and not _shared.denial(Action.RESOLVE)


def bulk_actions(store: Store, filters: QueueFilters) -> None:
    """The Proposals queue's Bulk actions panel over its filters, for a lead only (a reviewer who
    is not one sees nothing)."""
    if not _is_lead():
        return
    # A toggle, not an expander: an expander's contents run on every page run, and counting the
    # filter twice costs as much as the queue; only a lead who opens it pays for it.
    if not st.toggle("Bulk actions (lead)", key="bulk:open"):
        return
    _panel(store, PROPOSAL, filters, studio.REJECT_REASONS)


def filtered_bulk(store: Store, kind: str, typed: _queue_filter.Typed) -> None:
    """A queue's Bulk actions panel over the filter typed in its box (`pages/_queue_filter.py`:
    None, every open item); nothing while the typed words do not parse. A reject picks its reason
    from the queue's own (`studio.reject_reasons`), or, where it has none, types it."""
    if not _is_lead() or not typed.ok:
        return
    if not st.toggle("Bulk actions (lead)", key=f"{_prefix(kind)}:open"):
        return
    _panel(store, kind, typed.filters, studio.reject_reasons(kind) or None)


def _panel(
    store: Store, kind: str, filters: ItemFilters | None, reasons: Sequence[str] | None
) -> None:
    prefix, who = _prefix(kind), _shared.reviewer()
    flash = st.session_state.pop(f"{prefix}:flash", None)
    queue = store.queue(kind)
    with st.container(border=True):
        if flash:
            (st.error if flash[0] == "error" else st.success)(flash[1])
        st.caption("Over the queue's filter as it is now. Each is one batch of final decisions, "
                   "audited; Undo batch takes it back whole.")  # fmt: skip
        accept, reject = st.columns(2)
        plan = queue.bulk_plan(filters, _ACCEPT)
        with accept:
            st.markdown(plan.summary() + ".")
            sure = st.checkbox(f"Yes, accept these {len(plan.item_ids)}", key=f"{prefix}:ok:accept",
                               disabled=not plan.item_ids)  # fmt: skip
            what = "perfect items" if kind == PROPOSAL else "items"
            st.button(
                f"Accept {len(plan.item_ids)} {what}", icon=":material/check:",
                key=f"{prefix}:accept", disabled=not (sure and plan.item_ids), on_click=_apply,
                args=(store, kind, filters, plan, "", f"{prefix}:ok:accept"),
                help="Confirm with the box first",
            )  # fmt: skip
        no = queue.bulk_plan(filters, _REJECT)
        with reject:
            reason: str | None
            if reasons is None:
                reason = st.text_input("Reason", key=f"{prefix}:reason",
                                       placeholder="a reason for all of them")  # fmt: skip
            else:
                reason = st.selectbox("Reason", reasons, index=None, key=f"{prefix}:reason",
                                      placeholder="a reason for all of them")  # fmt: skip
            st.markdown(no.summary() + ".")
            sure_no = st.checkbox(f"Yes, reject these {len(no.item_ids)}", key=f"{prefix}:ok:reject",
                                  disabled=not no.item_ids or not reason)  # fmt: skip
            st.button(
                f"Reject {len(no.item_ids)} items", icon=":material/close:", key=f"{prefix}:reject",
                disabled=not (sure_no and no.item_ids and reason), on_click=_apply,
                args=(store, kind, filters, no, str(reason or ""), f"{prefix}:ok:reject"),
                help="Give a reason and confirm with the box first",
            )  # fmt: skip
        batch = queue.last_undoable_batch(who)
        if batch is not None:
            st.button(f"Undo batch ({batch[1]} items)", icon=":material/undo:",
                      key=f"{prefix}:undo", on_click=_undo, args=(store, kind))  # fmt: skip
