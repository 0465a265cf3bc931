"""The Review page's QA queue (issue 31): a built data set's QA sample (`codesearch dataset sample
DIR --queue`), one item at a time in the card frame every queue shares (`pages/_queue_frame.py`),
leased and voted like proposals. A says the item is correct, X that it is not (the note says why),
S skips, U undoes the reviewer's last decision. The card shows the intent, the tool call, the
expected findings in the corpus, the item's facts and the data set it belongs to. The item on the
card is in the address (`?queue=qa&item=ID`), so a reload resumes it. `codesearch dataset card DIR`
turns the settled decisions into the card's error rate. Which item is on the card, and the
callbacks of its buttons, are `pages/_item_queue.py`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import streamlit as st

from codesearch_core import studio
from codesearch_core.access import Action
from codesearch_core.models import DecisionAction
from codesearch_core.store import QA, Store
from pages import _answer_view, _item_queue, _queue_frame, _shared

QUEUE: Final = _item_queue.ItemQueue[studio.QACard](
    kind=QA, state="qa", widgets="qa", noun="item",
    words={DecisionAction.ACCEPT: "Correct:", DecisionAction.REJECT: "Incorrect:",
           DecisionAction.SKIP: "Skipped"},
    load=studio.qa_card, id_of=lambda c: c.qa_id,
    missing_hint=" (sampled again since?)",
)  # fmt: skip


def draw(store: Store, counts: Mapping[str, int], *, settling: bool = False) -> None:
    """The queue; `counts` are the queue's `counts()`, read once by the queue picker. `settling`:
    the Conflicts entry's card (the items in conflict, a lead's final decisions)."""
    st.caption(
        f"QA: {counts['open']} open · {counts['accept']} correct · {counts['reject']} incorrect · "
        f"{counts['conflict']} in conflict · the error rate: `{studio.QA_CARD_COMMAND}`"
    )
    QUEUE.draw(
        store, conflicts=counts["conflict"], plural="QA items", card=_card, settling=settling,
        empty=f"No QA items left to review. A data set's sample is queued by "
        f"`{studio.QA_SAMPLE_COMMAND}`; `{studio.QA_CARD_COMMAND}` then writes its error rate "
        "into the card.",
    )  # fmt: skip


# --- the card -----------------------------------------------------------------------------------


def _card(store: Store, card: studio.QACard, who: str) -> None:
    mine = card.vote_of(who)
    with st.container(border=True):
        QUEUE.place(store, card.qa_id, who, "QA item")
        state = {"accept": "correct", "reject": "incorrect", "conflict": "in conflict"}
        words = {"accept": "correct", "reject": "incorrect", "skip": "skipped"}
        reviews, history = studio.reviews_seen(card, who, words)
        st.caption(f"Item `{card.item.get('id', card.qa_id)}` · {card.dataset_line} · reviews: "
                   f"{reviews or 'none yet'} · item **{state.get(card.state or '', 'open')}**")  # fmt: skip
        st.subheader(str(card.item.get("intent", "")), anchor=False)
        st.markdown(" · ".join(f"{k} **{v}**" for k, v in card.facts.items()))
        _actions(card, store.queue(QA).last_undoable(who) is not None, mine)
    st.markdown("**Tool call**" if card.item.get("tool") != "plan" else "**Plan**")
    st.code(card.call_json, language="json")
    _answer_view.expected_code(str(card.item.get("corpus", "")), card.spans)
    _queue_frame.history("qa:history", history)


def _actions(card: studio.QACard, can_undo: bool, mine: tuple[str, int] | None) -> None:
    QUEUE.action_row(
        card.qa_id, mine[1] if mine else None, can_undo=can_undo,
        undo_help="Undo your own last decision on a QA item", refused=_shared.denial(Action.REVIEW),
        in_conflict=card.state == "conflict",
        accept=("Correct", "correct", "The item is right: its call answers the intent and finds "
                "exactly the expected spans"),
        reject=("Incorrect", "incorrect", "The item is wrong (say why in the note): the next "
                "build drops it"),
    )  # fmt: skip
