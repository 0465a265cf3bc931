"""The Review page's Drafts queue (the picker: `pages/_queues.py`): synthesized draft
blueprints, one at a time, leased to the reviewer like proposals; accept one as a blueprint, edit
its intent, reject it (with a reason) or skip it, undo, and step back with Previous / Next (the
shared card frame, `pages/_queue_frame.py`, its action row under the card's head).
Also the provenance box the Blueprints page shows for a blueprint accepted from a draft."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import pandas as pd
import streamlit as st

from codesearch_core import studio
from codesearch_core.errors import CodesearchError
from codesearch_core.models import DecisionAction, Difficulty
from codesearch_core.store import DRAFT, Draft, Store
from pages import _bulk, _identity, _item_queue, _queue_filter, _queue_frame, _shared

LAST_ACCEPTED = "drafts:last_accepted"  # the blueprint id the reviewer's last accept made


def _undone(draft_id: str) -> str:
    """An undo's message; an accept's blueprint went with it, so the button to open it goes."""
    st.session_state.pop(LAST_ACCEPTED, None)
    return f"Undone: draft `{draft_id}` is back on the card."


#: Step, undo and the message are the shared flow's; accept, reject and skip are decided in the
#: script, not a callback: they save the card's edited intent and difficulty first.
QUEUE: Final = _item_queue.Flow(
    kind=DRAFT, state="drafts", widgets="dq", noun="draft", undone=_undone
)
FLASH: Final = QUEUE.flash_key


def draw(store: Store, counts: Mapping[str, int]) -> None:
    """The queue; `counts` are the queue's `counts()`, read once by the queue picker."""
    st.caption(f"Drafts: {counts['open']} pending · {counts['accept']} accepted · "
               f"{counts['reject']} rejected")  # fmt: skip
    typed = _queue_filter.box(DRAFT)  # e.g. "rule=await_in_loop corpus=webshop"
    _bulk.filtered_bulk(store, DRAFT, typed)
    QUEUE.flash()
    last = st.session_state.get(LAST_ACCEPTED)
    if last and st.button(f"Open `{last}` on the Blueprints page", icon=":material/edit_note:",
                          key="drafts:open"):  # fmt: skip
        blueprint = store.blueprints.get(last)
        if blueprint is not None:
            _shared.go_to(
                _shared.PAGE_BLUEPRINTS,
                state={_shared.BLUEPRINT_DRAFT: studio.draft_from_blueprint(blueprint)},
            )
    who = _identity.ask_name("to review drafts")
    if not who:
        return
    with _shared.shown_errors():
        # A draft stepped back to or put back by Undo is shown as it is; otherwise the next one.
        pinned = st.session_state.get(QUEUE.pinned_key)
        draft_id = pinned or studio.next_item_of(store, DRAFT, who, typed.filters)
        draft = store.drafts.get(draft_id) if draft_id else None
        if draft is None:
            _queue_frame.step_row(store.queue(DRAFT).seen(who), None, key="drafts",
                                  on_step=QUEUE.step)  # fmt: skip
            st.info("No drafts left to review: make some on the Synthesize page.",
                    icon=":material/inbox:")  # fmt: skip
            if store.queue(DRAFT).last_undoable(who):
                st.button("Undo last decision", icon=":material/undo:", shortcut="U",
                          key="dq:undo_empty", on_click=QUEUE.undo)  # fmt: skip
            return
        _card(store, draft, who, counts)


def _card(store: Store, draft: Draft, who: str, counts: Mapping[str, int]) -> None:
    card = studio.draft_card(draft)
    key = f"{draft.id}:{draft.version}"
    decided = counts["accept"] + counts["reject"]
    pending = draft.status == "pending"
    with st.container(border=True):
        _queue_frame.position(f"Draft {decided + 1} of {decided + counts['open']}",
                              f"{counts['open']} pending")  # fmt: skip
        _queue_frame.progress(*store.queue(DRAFT).progress(who))
        _queue_frame.step_row(store.queue(DRAFT).seen(who), draft.id, key="drafts",
                              on_step=QUEUE.step)  # fmt: skip
        st.markdown(f"**{draft.corpus}** · `{draft.language}` · rule `{draft.rule}` · "
                    f"{len(draft.expected)} findings in {card.files} files")  # fmt: skip
        if not pending:
            made = f" as blueprint `{draft.blueprint_id}`" if draft.blueprint_id else ""
            st.info(f"Decided: **{draft.status}**{made} by {draft.decided_by}. Undo (U) takes "
                    "your latest decision back.", icon=":material/history:")  # fmt: skip
        done = None if pending else "Decided already: Undo (U) takes your latest decision back"
        # Under the card's head, as on every queue: the intent, the call and the findings below
        # it ran a screen and more, and at 1440x900 the buttons were below the fold (issue 39).
        # A and X still take the intent and difficulty as edited below.
        clicked = _queue_frame.action_row(
            [
                _queue_frame.Choice("Accept as blueprint", ":material/check:", "dq:accept",
                                    word="accept", shortcut="A", primary=True, width=2.0,
                                    disabled=not pending, help=done),
                _queue_frame.Choice("Reject", ":material/close:", "dq:reject", shortcut="X",
                                    disabled=not pending, help=done),
                _queue_frame.Choice("Skip", ":material/skip_next:", "dq:skip", shortcut="S",
                                    disabled=not pending, help=done, width=1.2),
                _queue_frame.Choice("Undo", ":material/undo:", "dq:undo", shortcut="U",
                                    disabled=store.queue(DRAFT).last_undoable(who) is None,
                                    help="Undo your own last draft decision (on any draft)",
                                    on_click=QUEUE.undo, width=1.2),
            ],
            note_key=QUEUE.note_key(key),
            note_placeholder="note · Enter, then A / X / S",
            reasons=_queue_frame.Reasons(studio.reject_reasons(DRAFT), QUEUE.reason_key(key)),
        )  # fmt: skip
        intent = st.text_area("Intent", value=draft.intent, key=f"dq:intent:{key}", height=80,
                              disabled=not pending)  # fmt: skip
        level, save_column = st.columns([3, 1], vertical_alignment="bottom")
        difficulty = level.segmented_control(
            "Difficulty", [d.value for d in Difficulty], default=draft.difficulty.value,
            key=f"dq:difficulty:{key}", required=True, disabled=not pending,
        )  # fmt: skip
        # Beside what it saves; A and X save an edit too, before they decide.
        save = save_column.button("Save edit", icon=":material/save:", key="dq:save",
                                  disabled=not pending, width="stretch")  # fmt: skip
        st.markdown("**Reference call**")
        st.code(draft.reference_call.to_json(), language="json", wrap_lines=True)
        st.markdown("**Expected findings**")
        rows = [{"path": s.path, "lines": s.lines, "text": s.text} for s in card.spans]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
        with st.expander("Provenance", icon=":material/history:"):
            _provenance_table(card.provenance)
        _queue_frame.history("dq:history", store.queue(DRAFT).history(draft.id))
    accept, reject, skip = clicked["dq:accept"], clicked["dq:reject"], clicked["dq:skip"]
    if not (accept or save or reject or skip):
        return
    note = str(st.session_state.get(QUEUE.note_key(key), "")).strip()
    reason = str(st.session_state.get(QUEUE.reason_key(key)) or "")
    edited = intent.strip() != draft.intent or difficulty != draft.difficulty.value
    try:
        seen = draft.version
        if edited and not skip:
            seen = store.drafts.edit(draft.id, intent=intent, difficulty=str(difficulty),
                                    seen_version=seen).version  # fmt: skip
        if accept:
            store.queue(DRAFT).decide(draft.id, DecisionAction.ACCEPT, who, note, version=seen)
            blueprint_id = (store.drafts.get(draft.id) or draft).blueprint_id
            st.session_state[LAST_ACCEPTED] = blueprint_id
            st.session_state[FLASH] = (
                "success",
                f"Accepted: blueprint `{blueprint_id}` made from the draft.",
            )
        elif reject:
            store.queue(DRAFT).decide(draft.id, DecisionAction.REJECT, who, note, reason,
                                      version=seen)  # fmt: skip
            why = f" ({reason})" if reason else ""
            st.session_state[FLASH] = ("success", f"Rejected draft `{draft.id}`{why}.")
        elif skip:
            store.queue(DRAFT).decide(draft.id, DecisionAction.SKIP, who, note)
            st.session_state[FLASH] = (
                "success",
                f"Skipped draft `{draft.id}`: it stays pending for the others.",
            )
        else:
            st.session_state[FLASH] = ("success", "Saved the edit; the draft stays in the queue.")
    except CodesearchError as err:
        st.error(f"Not done: {err}", icon=":material/error:")
        return
    if not save:
        st.session_state.pop(QUEUE.pinned_key, None)
    st.rerun()


def _provenance_table(rows: dict[str, str]) -> None:
    # A static table: the texts are read (and selected, copied) whole, not scrolled in a grid.
    st.table(pd.DataFrame({"value": list(rows.values())}, index=list(rows)))


def provenance_box(store: Store, blueprint_id: str | None) -> None:
    """On the Blueprints page: where a blueprint accepted from a draft came from (nothing for an
    authored one)."""
    rows = studio.blueprint_provenance(store, blueprint_id) if blueprint_id else None
    if rows is None:
        return
    with st.expander(f"Provenance: synthesized by rule `{rows['Mined rule']}`", expanded=True,
                     icon=":material/history:"):  # fmt: skip
        _provenance_table(rows)
