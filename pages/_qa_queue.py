"""The Review page's QA queue (issue 31): a built data set's QA sample (`codesearch dataset sample
DIR --queue`), one item at a time in the card frame every queue shares (`pages/_queue_frame.py`),
leased and voted like proposals. A says the item is correct, X that it is not (the note says why),
S skips, U undoes the reviewer's last decision. The card shows the intent, the tool call, the
expected findings in the corpus, the item's facts and the data set it belongs to. The item on the
card is in the address (`?queue=qa&item=ID`), so a reload resumes it. `codesearch dataset card DIR`
turns the settled decisions into the card's error rate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import pandas as pd
import streamlit as st

from codesearch_core import studio
from codesearch_core.access import Action
from codesearch_core.errors import CodesearchError
from codesearch_core.models import DecisionAction
from codesearch_core.store import QA, StaleDecisionError, Store
from pages import _answer_view, _queue_frame, _shared

CURRENT: Final = "qa:current"  # the QA item id on the card
#: An item shown as it is, decided or not (an undo brought it back, a link or Back named it).
PINNED: Final = "qa:pinned"
ADDRESSED: Final = "qa:addressed"  # the item the page last put in the address
FLASH: Final = "qa:flash"  # the last action's message: (kind, text)
_WORDS: Final = {
    DecisionAction.ACCEPT: "Correct:",
    DecisionAction.REJECT: "Incorrect:",
    DecisionAction.SKIP: "Skipped",
}


def draw(store: Store, counts: Mapping[str, int]) -> None:
    """The queue; `counts` are the store's `qa_counts()`, read once by the queue picker."""
    st.caption(
        f"QA: {counts['open']} open · {counts['accept']} correct · {counts['reject']} incorrect · "
        f"{counts['conflict']} in conflict · the error rate: `{studio.QA_CARD_COMMAND}`"
    )
    if counts["conflict"]:
        # Conflicts are never leased (nobody's to-do): a lead opens them here to settle them.
        not_lead = _shared.denial(Action.RESOLVE)
        st.button(f"Settle the next item in conflict ({counts['conflict']})",
                  icon=":material/gavel:", key="qa:conflicts", on_click=_open_conflict,
                  disabled=bool(not_lead), help=not_lead)  # fmt: skip
    if flash := st.session_state.pop(FLASH, None):
        _queue_frame.flash(*flash)
    who = _shared.reviewer()
    if not who:
        st.info("Type your name in the sidebar to review QA items.", icon=":material/person:")
        return
    with _shared.shown_errors():
        card = _current(store, who)
        if card is None:
            _empty(store, who)
        else:
            _card(store, card, who)


def _current(store: Store, who: str) -> studio.QACard | None:
    """The item for the card: the one the address names (a reload, a link, Back), the one on the
    card while it is still to do, else the next one leased to the reviewer."""
    addressed = st.query_params.get(studio.ITEM_PARAM)
    if addressed and addressed != st.session_state.get(ADDRESSED):
        st.session_state[CURRENT] = st.session_state[PINNED] = addressed
    item_id = st.session_state.get(CURRENT)
    card = studio.qa_card(store, item_id) if item_id else None
    if item_id and card is None and item_id == addressed:
        st.warning(f"No QA item `{item_id}` in this store (sampled again since?): the next one "
                   "to do instead.", icon=":material/search_off:")  # fmt: skip
    pinned = card is not None and card.qa_id == st.session_state.get(PINNED)
    if card is not None and studio.still_to_do_qa(card, who):
        store.take_lease(card.qa_id, who, kind=QA)  # a reload or a link: keep it ours
    elif card is not None and not pinned:
        card = None  # decided meanwhile (another tab, another reviewer): not to do any more
    if card is None:
        st.session_state.pop(PINNED, None)
        item_id = studio.next_qa_id(store, who)
        st.session_state[CURRENT] = item_id
        card = studio.qa_card(store, item_id) if item_id else None
    shown = card.qa_id if card else None
    _shared.sync_params({studio.ITEM_PARAM: shown})
    st.session_state[ADDRESSED] = shown
    return card


def _step(qa_id: str | None) -> None:
    """Previous / Next: an item the reviewer decided, as it is; None: the next one to do."""
    if qa_id is None:
        st.session_state.pop(PINNED, None)
        st.session_state[CURRENT] = None
    else:
        st.session_state[CURRENT] = st.session_state[PINNED] = qa_id


def _empty(store: Store, who: str) -> None:
    _queue_frame.step_row(store.seen_items(who, kind=QA), None, key="qa", on_step=_step)
    st.info(
        f"No QA items left to review. A data set's sample is queued by `{studio.QA_SAMPLE_COMMAND}`"
        f"; `{studio.QA_CARD_COMMAND}` then writes its error rate into the card.",
        icon=":material/inbox:",
    )
    if store.last_undoable(who, kind=QA):
        st.button("Undo last decision", icon=":material/undo:", shortcut="U", on_click=_undo,
                  key="qa:undo_empty")  # fmt: skip


# --- actions (callbacks: they run before the card is drawn again) -------------------------------


def _note_key(qa_id: str) -> str:
    return f"qa:note:{qa_id}"


def _reason_key(qa_id: str) -> str:
    return f"qa:reason:{qa_id}"


def _decide(qa_id: str, action: DecisionAction, seen: int | None, final: bool = False) -> None:
    store = _shared.get_store()
    note = str(st.session_state.get(_note_key(qa_id), "")).strip()
    reason = st.session_state.get(_reason_key(qa_id)) if action is DecisionAction.REJECT else None
    try:
        store.record_decision(qa_id, action, _shared.reviewer(), note=note, reason=reason or "",
                              seen=seen, final=final, kind=QA)  # fmt: skip
    except StaleDecisionError as err:
        # Another tab of this reviewer decided it: the next item, with why.
        st.session_state[CURRENT] = None
        st.session_state[FLASH] = ("warning", str(err))
        return
    except CodesearchError as err:
        # Nothing was written: the card stays, with the reason.
        st.session_state[FLASH] = ("error", f"Not done: {err}")
        return
    st.session_state.pop(PINNED, None)
    st.session_state[CURRENT] = None
    said = (f" ({reason})" if reason else "") + (f" with the note “{note}”" if note else "")
    final_word = "Final: " if final else ""
    st.session_state[FLASH] = ("success",
                               f"{final_word}{_WORDS[action]} item `{qa_id}`{said}.")  # fmt: skip


def _open_conflict() -> None:
    in_conflict = _shared.get_store().first_qa_conflict()
    if in_conflict:
        st.session_state[CURRENT] = st.session_state[PINNED] = in_conflict


def _undo() -> None:
    store = _shared.get_store()
    try:
        qa_id, _ = store.undo_last(_shared.reviewer(), kind=QA)
    except CodesearchError as err:
        st.session_state[FLASH] = ("error", f"Not done: {err}")
        return
    st.session_state[CURRENT] = st.session_state[PINNED] = qa_id
    st.session_state[FLASH] = ("success", f"Undone: item `{qa_id}` is back on the card.")


# --- the card -----------------------------------------------------------------------------------


def _card(store: Store, card: studio.QACard, who: str) -> None:
    done, share = store.queue_progress(who, kind=QA)
    mine = card.vote_of(who)
    with st.container(border=True):
        at = done if mine else done + 1
        _queue_frame.position(f"QA item {min(at, share)} of {share}", f"{share - done} left")
        _queue_frame.progress(done, share)
        _queue_frame.step_row(store.seen_items(who, kind=QA), card.qa_id, key="qa", on_step=_step)
        state = {"accept": "correct", "reject": "incorrect", "conflict": "in conflict"}
        words = {"accept": "correct", "reject": "incorrect", "skip": "skipped"}
        reviews = " · ".join(f"{r} **{words.get(a, a)}**" for r, (a, _) in card.votes.items())
        st.caption(f"Item `{card.item.get('id', card.qa_id)}` · {card.dataset_line} · reviews: "
                   f"{reviews or 'none yet'} · item **{state.get(card.state or '', 'open')}**")  # fmt: skip
        st.subheader(str(card.item.get("intent", "")), anchor=False)
        st.markdown(" · ".join(f"{k} **{v}**" for k, v in card.facts.items()))
        _actions(card, store.last_undoable(who, kind=QA) is not None, mine)
    st.markdown("**Tool call**" if card.item.get("tool") != "plan" else "**Plan**")
    st.code(card.call_json, language="json")
    _answer_view.expected_code(str(card.item.get("corpus", "")), card.spans)
    with st.expander("History", icon=":material/history:"):
        if card.history:
            rows = [
                {"when (UTC)": e.ts, "action": e.action.value, "reviewer": e.reviewer,
                 "reason": e.reason, "note": e.note, "final": e.final, "undone": e.undone}
                for e in card.history
            ]  # fmt: skip
            st.dataframe(pd.DataFrame(rows), hide_index=True)
        else:
            st.caption("No decisions yet.")


def _actions(card: studio.QACard, can_undo: bool, mine: tuple[str, int] | None) -> None:
    qa_id = card.qa_id
    refused = _shared.denial(Action.REVIEW)
    seen = mine[1] if mine else None

    def reason() -> None:
        st.selectbox("Why incorrect", studio.QA_REJECT_REASONS, index=None,
                     key=_reason_key(qa_id), placeholder="why incorrect",
                     label_visibility="collapsed")  # fmt: skip

    _queue_frame.action_row(
        [
            _queue_frame.Choice(
                "Correct", ":material/check:", "qa:accept", word="correct", shortcut="A",
                primary=True, disabled=bool(refused), help=refused or "The item is right: its "
                "call answers the intent and finds exactly the expected spans", on_click=_decide,
                args=(qa_id, DecisionAction.ACCEPT, seen), width=1.5,
            ),
            _queue_frame.Choice(
                "Incorrect", ":material/close:", "qa:reject", word="incorrect", shortcut="X",
                disabled=bool(refused), help=refused or "The item is wrong (say why in the note): "
                "the next build drops it", on_click=_decide,
                args=(qa_id, DecisionAction.REJECT, seen), width=1.6,
            ),
            _queue_frame.Choice(
                "Skip", ":material/skip_next:", "qa:skip", shortcut="S", disabled=bool(refused),
                help=refused, on_click=_decide, args=(qa_id, DecisionAction.SKIP, seen),
                width=1.3,
            ),
            _queue_frame.Choice(
                "Undo", ":material/undo:", "qa:undo", shortcut="U", disabled=not can_undo,
                on_click=_undo, help="Undo your own last decision on a QA item", width=1.3,
            ),
        ],
        note_key=_note_key(qa_id),
        note_placeholder="note · Enter, then A / X / S",
        extra=reason,
    )  # fmt: skip
    if card.state == "conflict":
        _queue_frame.final_row("item", qa_id, key="qa:", decide=_decide,
                               accept_blocked=None)  # fmt: skip
