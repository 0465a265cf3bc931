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
    next_id=studio.next_qa_id,
    missing_hint=" (sampled again since?)",
)  # fmt: skip


def draw(store: Store, counts: Mapping[str, int]) -> None:
    """The queue; `counts` are the store's `qa_counts()`, read once by the queue picker."""
    st.caption(
        f"QA: {counts['open']} open · {counts['accept']} correct · {counts['reject']} incorrect · "
        f"{counts['conflict']} in conflict · the error rate: `{studio.QA_CARD_COMMAND}`"
    )
    QUEUE.draw(
        store, conflicts=counts["conflict"], plural="QA items", card=_card,
        empty=f"No QA items left to review. A data set's sample is queued by "
        f"`{studio.QA_SAMPLE_COMMAND}`; `{studio.QA_CARD_COMMAND}` then writes its error rate "
        "into the card.",
    )  # fmt: skip


# --- the card -----------------------------------------------------------------------------------


def _card(store: Store, card: studio.QACard, who: str) -> None:
    done, share = store.queue_progress(who, kind=QA)
    mine = card.vote_of(who)
    seen = store.seen_items(who, kind=QA)
    with st.container(border=True):
        at = studio.queue_place(seen, card.qa_id, done)
        _queue_frame.position(f"QA item {min(at, share)} of {share}", f"{share - done} left")
        _queue_frame.progress(done, share)
        _queue_frame.step_row(seen, card.qa_id, key="qa", on_step=QUEUE.step)
        state = {"accept": "correct", "reject": "incorrect", "conflict": "in conflict"}
        words = {"accept": "correct", "reject": "incorrect", "skip": "skipped"}
        reviews, history = studio.reviews_seen(card, who, words)
        st.caption(f"Item `{card.item.get('id', card.qa_id)}` · {card.dataset_line} · reviews: "
                   f"{reviews or 'none yet'} · item **{state.get(card.state or '', 'open')}**")  # fmt: skip
        st.subheader(str(card.item.get("intent", "")), anchor=False)
        st.markdown(" · ".join(f"{k} **{v}**" for k, v in card.facts.items()))
        _actions(card, store.last_undoable(who, kind=QA) is not None, mine)
    st.markdown("**Tool call**" if card.item.get("tool") != "plan" else "**Plan**")
    st.code(card.call_json, language="json")
    _answer_view.expected_code(str(card.item.get("corpus", "")), card.spans)
    _queue_frame.history("qa:history", history)


def _actions(card: studio.QACard, can_undo: bool, mine: tuple[str, int] | None) -> None:
    qa_id = card.qa_id
    refused = _shared.denial(Action.REVIEW)
    seen = mine[1] if mine else None

    def reason() -> None:
        st.selectbox("Why incorrect", studio.QA_REJECT_REASONS, index=None,
                     key=QUEUE.reason_key(qa_id), placeholder="why incorrect",
                     label_visibility="collapsed")  # fmt: skip

    _queue_frame.action_row(
        [
            _queue_frame.Choice(
                "Correct", ":material/check:", "qa:accept", word="correct", shortcut="A",
                primary=True, disabled=bool(refused), help=refused or "The item is right: its "
                "call answers the intent and finds exactly the expected spans", on_click=QUEUE.decide,
                args=(qa_id, DecisionAction.ACCEPT, seen), width=1.5,
            ),
            _queue_frame.Choice(
                "Incorrect", ":material/close:", "qa:reject", word="incorrect", shortcut="X",
                disabled=bool(refused), help=refused or "The item is wrong (say why in the note): "
                "the next build drops it", on_click=QUEUE.decide,
                args=(qa_id, DecisionAction.REJECT, seen), width=1.6,
            ),
            _queue_frame.Choice(
                "Skip", ":material/skip_next:", "qa:skip", shortcut="S", disabled=bool(refused),
                help=refused, on_click=QUEUE.decide, args=(qa_id, DecisionAction.SKIP, seen),
                width=1.3,
            ),
            _queue_frame.Choice(
                "Undo", ":material/undo:", "qa:undo", shortcut="U", disabled=not can_undo,
                on_click=QUEUE.undo, help="Undo your own last decision on a QA item", width=1.3,
            ),
        ],
        note_key=QUEUE.note_key(qa_id),
        note_placeholder="note · Enter, then A / X / S",
        extra=reason,
        conflict=_queue_frame.Conflict("item", qa_id, "qa:", QUEUE.decide)
        if card.state == "conflict" else None,
    )  # fmt: skip
