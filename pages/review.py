"""Review: one proposal at a time against its blueprint, decided with one keystroke.

A reviewer's queue comes from the store: the next item they still have to review, leased to them so
other reviewers are not shown it (unless it needs more reviews). Each reviewer's decision is kept as
theirs; items on which reviewers disagree go to the Conflicts queue for a final decision. Filters,
the item on the card and the reviewer live in the page address, and undo walks back through the
reviewer's own decisions in the store, so a reload loses nothing. The card is a fragment: a decision
re-renders the card, not the page.
"""

from __future__ import annotations

from dataclasses import replace
from typing import cast

import streamlit as st

from codesearch_core import studio
from codesearch_core.engines import IMPORT_ENGINE, MUTATIONS_ENGINE, OPENAI_ENGINE, VLLM_ENGINE
from codesearch_core.errors import CodesearchError
from codesearch_core.models import DecisionAction, ToolName
from codesearch_core.store import (
    PROPOSAL,
    DecisionState,
    QueueFilters,
    ReviewItem,
    Store,
)
from codesearch_core.tools import AST_GREP_LANGUAGES
from pages import (
    _answer_view,
    _bulk,
    _call_editor,
    _identity,
    _item_queue,
    _queue_frame,
    _queues,
    _shared,
)

_shared.ensure_routed()

ANY = "any"
ADDRESSED = "review_addressed"  # the item the page last put in the address
LEASED = "review_leased"  # the item a decision just leased: the card need not lease it again
SETTLING = "review_settling"  # whether the card was the Conflicts entry's on the last run
WHOLE_RUN = "review_whole_run"  # whether the card is drawn in a run of the whole page


def _said(store: Store, item_id: str, action: DecisionAction, final: bool) -> str:
    """A decision's toast: the word of what was done (the next card is in view at once)."""
    done = {DecisionAction.SKIP: "Skipped"}.get(action, f"{action.value.capitalize()}ed")
    return ("Final: " if final else "") + done


def _next_after(store: Store, item_id: str) -> str | None:
    """After a decision: the next item the filters select, leased now (the card need not lease
    it again)."""
    st.session_state[LEASED] = next_id = studio.next_item_id(store, filters, after_id=item_id)
    return next_id


#: Decide, undo, step and their messages are the shared flow's; the filters pick what comes next.
QUEUE = _item_queue.Flow(
    kind=PROPOSAL, state="review", widgets="", noun="item", said=_said,
    undone=lambda _: "Undone: the item is back on the card", shown_as="toast",
    next_after=_next_after,
)  # fmt: skip
CURRENT, FLASH = QUEUE.current_key, QUEUE.flash_key  # the proposal id on the card; its message
UNDONE = QUEUE.pinned_key  # the item an undo put back on the card: shown even if others settled it

store = _shared.get_store()
st.title("Review")
picked = _queues.show(store)
if picked is _queues.Picked.DRAWN:  # another queue (its own module) instead of the proposals'
    st.stop()
# From the picker's Conflicts entry: the proposals in conflict, a lead's to settle.
conflicts_entry = picked is _queues.Picked.PROPOSAL_CONFLICTS

# --- queue filters ------------------------------------------------------------------------------

who = _shared.reviewer()
if st.session_state.get(SETTLING, False) != conflicts_entry:
    # Into or out of Conflicts: the card starts again from the first item of the other queue.
    st.session_state[SETTLING] = conflicts_entry
    st.session_state.pop(CURRENT, None)
addressed = st.query_params.get(studio.ITEM_PARAM)
if addressed and addressed != st.session_state.get(ADDRESSED):
    # The address names another item than the page last put there: a link, a reload, or the
    # browser's Back or Forward (issue 29). It wins, and the item is shown as it is, decided or
    # not (Back shows the item just decided, with its decision; nothing is decided again).
    st.session_state[CURRENT] = st.session_state[UNDONE] = addressed


def _filters_panel() -> QueueFilters:
    """The Queue filters panel and the bulk actions over them; returns the filters."""
    if any(k in st.query_params for k in studio.FILTER_PARAMS):
        # The address wins: a link from Overview, a bookmark, a reload.
        filters = studio.filters_from_params(st.query_params.to_dict(), who)
    else:
        filters = st.session_state.get(_shared.REVIEW_FILTERS) or QueueFilters()
    if st.session_state.get("rf:applied") != filters:
        # Filters set elsewhere (an Overview chart) are loaded into the widgets once.
        st.session_state.update(
            {
                "rf:text": filters.text or "",
                "rf:tool": filters.tool or ANY,
                "rf:language": filters.language or ANY,
                "rf:tag": filters.tag or "",
                "rf:engine": filters.engine or ANY,
                "rf:decision": DecisionState(filters.decision).value,
                "rf:graded": filters.min_f1 is not None or filters.max_f1 is not None,
                "rf:f1": (
                    filters.min_f1 if filters.min_f1 is not None else 0.0,
                    filters.max_f1 if filters.max_f1 is not None else 1.0,
                ),
            }
        )

    with st.expander("Queue filters", icon=":material/filter_list:", expanded=False):
        # Typed text applies when the box loses focus (a click elsewhere, Tab) as well as on Enter.
        search = st.text_input(
            "Search", key="rf:text", placeholder="words of the intent, the pattern or a note",
        )  # fmt: skip
        c1, c2, c3, c4, c5 = st.columns(5)
        tool = c1.selectbox("Reference tool", [ANY, *(t.value for t in ToolName)], key="rf:tool")
        language = c2.selectbox(
            "Language",
            [ANY, *AST_GREP_LANGUAGES, "text"],
            key="rf:language",
            accept_new_options=True,
        )
        tag = c3.text_input("Tag", key="rf:tag", placeholder="e.g. react")
        engine = c4.selectbox(
            "Engine",
            [ANY, MUTATIONS_ENGINE, VLLM_ENGINE, OPENAI_ENGINE, IMPORT_ENGINE, studio.EDIT_ENGINE],
            key="rf:engine",
            accept_new_options=True,
        )
        decision = c5.selectbox(
            "Decision", [d.value for d in DecisionState], key="rf:decision", help="undecided: to do"
        )
        g1, g2 = st.columns([1, 4])
        graded = g1.toggle("By span F1", key="rf:graded", help="Only graded items in this range.")
        f1_range = cast(
            tuple[float, float],
            g2.slider("Span F1", 0.0, 1.0, step=0.05, key="rf:f1", disabled=not graded),
        )

    new_filters = replace(
        filters,
        text=search.strip()[:200] or None,
        tool=None if tool == ANY else tool,
        language=None if language == ANY else language,
        tag=tag.strip() or None,
        engine=None if engine == ANY else engine,
        decision=DecisionState(decision),
        min_f1=float(f1_range[0]) if graded else None,
        max_f1=float(f1_range[1]) if graded else None,
        reviewer=who or None,
    )
    if replace(new_filters, reviewer=None) != replace(filters, reviewer=None):
        # Other filters: the card starts again from the first matching item. Not the reviewer's name
        # filled in on a first run: that dropped the item a link or Back asked for (issue 29).
        st.session_state.pop(CURRENT, None)
    st.session_state[_shared.REVIEW_FILTERS] = new_filters
    st.session_state["rf:applied"] = new_filters
    # The address carries the filters (and, below, the item), so a reload or a bookmark keeps them.
    wanted = studio.filters_to_params(new_filters)
    _shared.sync_params({key: wanted.get(key) for key in studio.FILTER_PARAMS})
    active = {k: v for k, v in new_filters.to_dict().items() if k not in ("decision", "reviewer")}
    if active:
        st.caption("Filtered by " + ", ".join(f"**{k}** = `{v}`" for k, v in active.items()))
    _bulk.bulk_actions(store, new_filters)
    return new_filters


if conflicts_entry:
    filters = QueueFilters(decision=DecisionState.CONFLICT, reviewer=who or None)
    _shared.sync_params(dict.fromkeys(studio.FILTER_PARAMS))  # Conflicts has no filters of its own
else:
    filters = _filters_panel()


# --- actions (callbacks: they run before the card re-renders) -----------------------------------


def _run_now(item: ReviewItem) -> None:
    """Execute and grade an item that was never run (only a run call can be accepted)."""
    try:
        studio.run_item(store, item)
        st.session_state[FLASH] = ("toast", "Executed and graded")
    except CodesearchError as err:
        st.session_state[FLASH] = ("error", str(err))


def _rerun_edited(item: ReviewItem, form: studio.FormResult) -> None:
    if form.parsed is None:
        st.session_state[FLASH] = ("error", "Fix the edited call before running it.")
        return
    try:
        new_id = studio.rerun_edited(store, item, form.parsed, _shared.reviewer())
        st.session_state[CURRENT] = new_id
        st.session_state[FLASH] = ("toast", "Edited call stored as a new proposal and graded")
    except CodesearchError as err:
        st.session_state[FLASH] = ("error", str(err))


# --- the card -----------------------------------------------------------------------------------


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def _decision_bar(item: ReviewItem, who: str, can_undo: bool) -> None:
    """Accept / Reject / Skip / Undo with their keys, the note and the reject reason: at the top of
    the card, so neither the mouse nor the eye has to travel to decide."""
    stored = item.proposal
    vote = item.vote_of(who) if who else None
    QUEUE.action_row(
        stored.id, vote[1] if vote else None, can_undo=can_undo,
        undo_help="Undo your own last decision (on any item)", can_decide=bool(who),
        blocked=studio.accept_blocker(item), in_conflict=item.state == "conflict",
    )  # fmt: skip


@st.fragment
def review_card() -> None:
    # Only the latest action's message: an earlier one never stays beside it.
    flash = QUEUE.flash()
    # A fragment's rerun does not pass through app.py's error handler: a refusal (an access
    # removed meanwhile) is shown here, once, in place of the card.
    try:
        _card()
    except CodesearchError as err:
        if not flash or str(err) not in flash[1]:  # said already by the flash ("Not done: ...")
            st.error(str(err), icon=":material/error:")
    st.session_state[WHOLE_RUN] = False  # the fragment's own reruns that follow are not


def _card() -> None:
    to_do = bool(who) and DecisionState(filters.decision) is DecisionState.UNDECIDED
    item_id = st.session_state.get(CURRENT)
    leased = st.session_state.pop(LEASED, None)
    item = store.review_item(item_id) if item_id else None
    pinned = item is not None and item.proposal.id == st.session_state.get(UNDONE)
    if item is not None and to_do and not pinned and not studio.still_to_do(item, who):
        item = None  # decided meanwhile (another tab, another reviewer): not to do any more
    elif item is not None and to_do and item.proposal.id != leased:
        store.queue(PROPOSAL).take_lease(
            item.proposal.id, who
        )  # a reload or a deep link: keep it ours
    if item is None:
        item_id = studio.next_item_id(store, filters)
        st.session_state[CURRENT] = item_id
        item = store.review_item(item_id) if item_id else None
    _shared.sync_params({studio.ITEM_PARAM: item.proposal.id if item else None})
    st.session_state[ADDRESSED] = item.proposal.id if item else None
    undoable = store.queue(PROPOSAL).last_undoable(who) if who else None
    if item is None and conflicts_entry and not st.session_state.get(WHOLE_RUN):
        # The proposals' last conflict is settled in this fragment's run: the whole page runs
        # again, so the picker (outside the fragment) brings the next queue's conflicts.
        st.rerun()
    if item is None:
        st.success("Nothing to review with these filters.", icon=":material/done_all:")
        if who:
            _queue_frame.step_row(
                store.queue(PROPOSAL).seen(who), None, key="review", on_step=QUEUE.step
            )
        if undoable:
            st.button("Undo last decision", icon=":material/undo:", shortcut="U",
                      on_click=QUEUE.undo, key="undo_empty")  # fmt: skip
        left, right = st.columns(2)
        if left.button("Make proposals", icon=":material/auto_awesome:"):
            _shared.go_to(_shared.PAGE_PROPOSE)
        if right.button("Show every item", icon=":material/filter_list_off:"):
            st.session_state[_shared.REVIEW_FILTERS] = QueueFilters(decision=DecisionState.ANY)
            for key in studio.FILTER_PARAMS:
                st.query_params.pop(key, None)
            st.query_params["decision"] = DecisionState.ANY.value
            st.rerun()
        return

    bp, stored = item.blueprint, item.proposal
    proposal = stored.proposal
    # Position among every item the filters select, decided or not: it does not shift as you go.
    # Conflicts are counted among themselves: a lead settling them read "Item 71 of 245"
    # (issue 39).
    settling = DecisionState(filters.decision) is DecisionState.CONFLICT
    placed = filters if settling else replace(filters, decision=DecisionState.ANY)
    position, total = store.queue_position(placed, stored.id)
    left_to_do = store.review_queue(filters, limit=0).total

    # Header: where we are, and what this item is.
    head, status = st.columns([3, 2])
    with head:
        noun = "Conflict" if settling else "Item"
        where = f"{noun} {position} of {total}" if position else f"{noun} (outside the filters)"
        _queue_frame.position(where, f"{left_to_do} {studio.state_words(filters.decision)}")
        if who:
            _queue_frame.progress(*store.queue(PROPOSAL).progress(who))
            _queue_frame.step_row(
                store.queue(PROPOSAL).seen(who), stored.id, key="review", on_step=QUEUE.step
            )
        st.caption(
            f"`{bp.id}` · corpus **{bp.corpus}** · {bp.language} · {bp.difficulty.value}"
            + (" · " + " ".join(f"`{t}`" for t in bp.tags) if bp.tags else "")
        )
    with status:
        origin = f"{proposal.engine} · {proposal.model}"
        if proposal.mutation_kind:
            origin += f" · mutation **{proposal.mutation_kind}**"
        if proposal.parent_id:
            origin += f" · edited from `{proposal.parent_id[:10]}`"
        st.caption(f"Proposal `{stored.id[:10]}` (#{stored.seq}) · {origin}")
        state = {"accept": "accepted", "reject": "rejected", "conflict": "in conflict"}
        reviews, history = studio.reviews_seen(item, who)
        st.caption(f"Reviews: {reviews} · item **{state.get(item.state or '', 'open')}**")
        if item.decision is not None and item.decision.final:
            d = item.decision
            st.info(f"Final decision: **{d.action.value}** by {d.reviewer}"
                    + (f" ({d.note})" if d.note else ""), icon=":material/gavel:")  # fmt: skip
    st.subheader(bp.intent, anchor=False)
    _decision_bar(item, who, undoable is not None)

    # The calls.
    ref_call = bp.reference_call.to_dict()
    prop_call = proposal.call.to_dict() if proposal.call else None
    _answer_view.calls(bp, prop_call, proposal.raw_text, proposal.error, proposal.repairs)

    # Run, grade, findings.
    run = item.execution
    if run is None:
        st.warning("Not executed yet: only a call that ran can be accepted.",
                   icon=":material/hourglass_empty:")  # fmt: skip
        st.button("Run it now", icon=":material/play_arrow:", key="run_now",
                  disabled=proposal.call is None, on_click=_run_now, args=(item,))  # fmt: skip
    else:
        metrics = st.columns(6)
        g = item.grade
        metrics[0].metric("Span F1", _fmt(g.span_f1 if g else None))
        metrics[1].metric("Precision", _fmt(g.span_precision if g else None))
        metrics[2].metric("Recall", _fmt(g.span_recall if g else None))
        metrics[3].metric("File IoU", _fmt(g.file_iou if g else None))
        metrics[4].metric("Reward", _fmt(item.reward.total if item.reward else None))
        metrics[5].metric("Findings", len(run.findings), help=f"{run.elapsed_s * 1000:.0f} ms")
        if item.reward:
            st.caption(
                "Reward components: "
                + " · ".join(f"{k} {v:+.2f}" for k, v in item.reward.components.items())
            )
        if not run.ok:
            st.error(f"**{run.error_kind or 'error'}**: {run.error}", icon=":material/error:")
        for warning in run.warnings:
            st.warning(f"**Pattern**: {warning}", icon=":material/warning:")
        if not item.grade_current:
            st.warning("Graded before the blueprint's expected findings changed: run it again.",
                       icon=":material/update:")  # fmt: skip
        if run.truncated:
            st.warning("The findings were cut at the limit.")
        _answer_view.findings(bp.corpus, studio.finding_rows_for(item) or ())

    # A toggle, not an expander: an expander builds its editor on every card, shut or not (a third
    # of the card's time); the toggle builds it only for the reviewer who asks.
    if st.toggle("Edit the call and re-run", key=f"edit_open:{stored.id}"):
        st.caption("The edited call is stored as a new proposal (its parent is this one), executed "
                   "and graded; the card then shows it so you can accept it.")  # fmt: skip
        result = _call_editor.call_editor("review_edit", prop_call or ref_call)
        # Read in the script, not in an on_click callback: a callback runs before the editor
        # and would see the call as it was before the last keystrokes (issue 29).
        if st.button("Run the edited call", icon=":material/play_arrow:", disabled=not who,
                     key="rerun_edited"):  # fmt: skip
            _rerun_edited(item, result)
            st.rerun()
    _queue_frame.history(
        "review:history", history, lambda: _raw(item), label="History and raw output"
    )


def _raw(item: ReviewItem) -> None:
    """The model's answer as it came, and what the tool wrote to stderr."""
    st.code(item.proposal.proposal.raw_text, language="json", wrap_lines=True)
    if item.execution is not None and item.execution.stderr:
        st.code(item.execution.stderr, language="text")


st.session_state[WHOLE_RUN] = True  # this run draws the whole page, picker and all
# Outside the card's fragment: a name typed there runs the whole page again under it.
_identity.ask_name("to record decisions")
review_card()
