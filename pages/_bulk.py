"""A lead's bulk actions on the Review page's Proposals queue, over the filter in force: accept
every item that is safe to accept (ran, graded perfect; never failed, stale or in conflict), or
reject the filter with one reason. Each shows its count and what it leaves out, asks for a
confirmation, and is one audited batch that "Undo batch" (or U on the card) takes back whole.
The store (`store.bulk`) decides what is in a batch; this only lays it out."""

from __future__ import annotations

from typing import Final

import streamlit as st

from codesearch_core import studio
from codesearch_core.access import Action
from codesearch_core.errors import CodesearchError
from codesearch_core.models import DecisionAction
from codesearch_core.store import PROPOSAL, BulkPlan, QueueFilters, Store
from pages import _shared

_FLASH: Final = "bulk_flash"  # what the last bulk action did, shown once
_ACCEPT, _REJECT = DecisionAction.ACCEPT, DecisionAction.REJECT


def _apply(store: Store, filters: QueueFilters, plan: BulkPlan, reason: str, on_done: str) -> None:
    who = _shared.reviewer()
    try:
        _, done = store.queue(PROPOSAL).bulk_decide(
            filters, plan.action, who, expected=plan, reason=reason
        )
        word = "Accepted" if plan.action is _ACCEPT else "Rejected"
        st.session_state[_FLASH] = ("success", f"{word} {len(done.item_ids)} items as one batch.")
    except CodesearchError as err:  # a stale count among them: nothing was written
        st.session_state[_FLASH] = ("error", str(err))
    st.session_state.pop(on_done, None)  # the next bulk action is confirmed afresh


def _undo(store: Store) -> None:
    try:
        store.queue(PROPOSAL).undo(_shared.reviewer())
        st.session_state[_FLASH] = ("success", "Batch undone: its items are as they were.")
    except CodesearchError as err:
        st.session_state[_FLASH] = ("error", str(err))


def bulk_actions(store: Store, filters: QueueFilters) -> None:
    """The Bulk actions panel, for a lead only (a reviewer who is not one sees nothing)."""
    who = _shared.reviewer()
    if not who or _shared.denial(Action.RESOLVE):
        return
    # A toggle, not an expander: an expander's contents run on every page run, and counting the
    # filter twice costs as much as the queue; only a lead who opens it pays for it.
    if not st.toggle("Bulk actions (lead)", key="bulk:open"):
        return
    flash = st.session_state.pop(_FLASH, None)
    with st.container(border=True):
        if flash:
            (st.error if flash[0] == "error" else st.success)(flash[1])
        st.caption("Over the queue's filter as it is now. Each is one batch of final decisions, "
                   "audited; Undo batch takes it back whole.")  # fmt: skip
        accept, reject = st.columns(2)
        plan = store.queue(PROPOSAL).bulk_plan(filters, _ACCEPT)
        with accept:
            st.markdown(plan.summary() + ".")
            sure = st.checkbox(f"Yes, accept these {len(plan.item_ids)}", key="bulk:ok:accept",
                               disabled=not plan.item_ids)  # fmt: skip
            st.button(
                f"Accept {len(plan.item_ids)} perfect items", icon=":material/check:",
                key="bulk:accept", disabled=not (sure and plan.item_ids), on_click=_apply,
                args=(store, filters, plan, "", "bulk:ok:accept"),
                help="Confirm with the box first",
            )  # fmt: skip
        no = store.queue(PROPOSAL).bulk_plan(filters, _REJECT)
        with reject:
            reason = st.selectbox("Reason", studio.REJECT_REASONS, index=None, key="bulk:reason",
                                  placeholder="a reason for all of them")  # fmt: skip
            st.markdown(no.summary() + ".")
            sure_no = st.checkbox(f"Yes, reject these {len(no.item_ids)}", key="bulk:ok:reject",
                                  disabled=not no.item_ids or not reason)  # fmt: skip
            st.button(
                f"Reject {len(no.item_ids)} items", icon=":material/close:", key="bulk:reject",
                disabled=not (sure_no and no.item_ids and reason), on_click=_apply,
                args=(store, filters, no, str(reason or ""), "bulk:ok:reject"),
                help="Pick a reason and confirm with the box first",
            )  # fmt: skip
        batch = store.queue(PROPOSAL).last_undoable_batch(who)
        if batch is not None:
            st.button(f"Undo batch ({batch[1]} items)", icon=":material/undo:", key="bulk:undo",
                      on_click=_undo, args=(store,))  # fmt: skip
