"""The Review page's queue picker (Proposals, Drafts, Drift: `pages/_drift_queue.py`, Episodes:
`pages/_episodes_queue.py`, QA: `pages/_qa_queue.py`) and its Drafts queue: synthesized draft
blueprints, one at a time, leased to the reviewer like proposals; accept one as a blueprint, edit
its intent, reject or skip it, undo, and step back with Previous / Next (the shared card frame,
`pages/_queue_frame.py`).
Also the provenance box the Blueprints page shows for a blueprint accepted from a draft."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from codesearch_core import studio
from codesearch_core.errors import CodesearchError
from codesearch_core.models import DecisionAction, Difficulty
from codesearch_core.store import DRAFT, Draft, Store
from pages import _drift_queue, _episodes_queue, _qa_queue, _queue_frame, _shared

QUEUE = "review:queue"
PROPOSALS, DRAFTS, DRIFT, EPISODES, QA = "Proposals", "Drafts", "Drift", "Episodes", "QA"
LAST_ACCEPTED = "drafts:last_accepted"  # the blueprint id the reviewer's last accept made
FLASH = "drafts:flash"
PINNED = "drafts:current"  # a draft stepped back to (Previous) or put back by Undo


def show(store: Store) -> bool:
    """Draw the queue picker; with the Drafts, Drift, Episodes or QA queue picked, draw it and
    return True (the page then stops: the proposals' card is not drawn)."""
    wanted = {"drafts": DRAFTS, "drift": DRIFT, "episodes": EPISODES, "qa": QA}.get(
        st.query_params.get(_queue_frame.QUEUE_PARAM, "")
    )
    if wanted and QUEUE not in st.session_state:
        st.session_state[QUEUE] = wanted
    episodes = store.episode_counts()  # the Episodes queue's caption too: one count a run
    qa = store.qa_counts()  # likewise the QA queue's
    counts = {DRAFTS: store.draft_counts()["pending"], DRIFT: len(store.open_drift()),
              EPISODES: episodes["open"], QA: qa["open"]}  # fmt: skip
    choice = st.segmented_control(
        "Queue", [PROPOSALS, DRAFTS, DRIFT, EPISODES, QA], default=PROPOSALS, key=QUEUE, required=True,
        format_func=lambda q: f"{q} ({counts[q]})" if q in counts else q,
    )  # fmt: skip
    _queue_frame.address_queue(str(choice).lower())
    if choice == DRAFTS:
        _queue(store)
        return True
    if choice == DRIFT:
        _drift_queue.draw(store)
        return True
    if choice == EPISODES:
        _episodes_queue.draw(store, episodes)
        return True
    if choice == QA:
        _qa_queue.draw(store, qa)
        return True
    return False


def _queue(store: Store) -> None:
    counts = store.draft_counts()
    st.caption(f"Drafts: {counts['pending']} pending · {counts['accepted']} accepted · "
               f"{counts['rejected']} rejected")  # fmt: skip
    if flash := st.session_state.pop(FLASH, None):
        _queue_frame.flash(*flash)
    last = st.session_state.get(LAST_ACCEPTED)
    if last and st.button(f"Open `{last}` on the Blueprints page", icon=":material/edit_note:",
                          key="drafts:open"):  # fmt: skip
        blueprint = store.get_blueprint(last)
        if blueprint is not None:
            _shared.go_to(
                _shared.PAGE_BLUEPRINTS,
                state={_shared.BLUEPRINT_DRAFT: studio.draft_from_blueprint(blueprint)},
            )
    who = _shared.reviewer()
    if not who:
        st.info("Type your name in the sidebar to review drafts.", icon=":material/person:")
        return
    with _shared.shown_errors():
        # A draft stepped back to or put back by Undo is shown as it is; otherwise the next one.
        draft_id = st.session_state.get(PINNED) or store.lease_next_draft(who)
        draft = store.get_draft(draft_id) if draft_id else None
        _queue_frame.progress(*store.queue_progress(who, kind=DRAFT))
        _queue_frame.step_row(store.seen_items(who, kind=DRAFT), draft.id if draft else None,
                              key="drafts", on_step=_step)  # fmt: skip
        if draft is None:
            st.info("No drafts left to review: make some on the Synthesize page.",
                    icon=":material/inbox:")  # fmt: skip
            if store.last_undoable(who, kind=DRAFT):
                st.button("Undo last decision", icon=":material/undo:", shortcut="U",
                          key="dq:undo_empty", on_click=_undo, args=(store, who))  # fmt: skip
            return
        _card(store, draft, who, counts)


def _step(draft_id: str | None) -> None:
    if draft_id is None:
        st.session_state.pop(PINNED, None)
    else:
        st.session_state[PINNED] = draft_id


def _undo(store: Store, who: str) -> None:
    """Take back the reviewer's latest draft decision (an accept's blueprint goes with it) and
    put that draft back on the card."""
    try:
        draft_id, _ = store.undo_last(who, kind=DRAFT)
    except CodesearchError as err:
        st.session_state[FLASH] = ("error", f"Not undone: {err}")
        return
    st.session_state[PINNED] = draft_id
    st.session_state.pop(LAST_ACCEPTED, None)
    st.session_state[FLASH] = ("success", f"Undone: draft `{draft_id}` is back on the card.")


def _card(store: Store, draft: Draft, who: str, counts: dict[str, int]) -> None:
    card = studio.draft_card(draft)
    key = f"{draft.id}:{draft.version}"
    decided = counts["accepted"] + counts["rejected"]
    pending = draft.status == "pending"
    with st.container(border=True):
        _queue_frame.position(f"Draft {decided + 1} of {decided + counts['pending']}",
                              f"{counts['pending']} pending")  # fmt: skip
        st.markdown(f"**{draft.corpus}** · `{draft.language}` · rule `{draft.rule}` · "
                    f"{len(draft.expected)} findings in {card.files} files")  # fmt: skip
        if not pending:
            made = f" as blueprint `{draft.blueprint_id}`" if draft.blueprint_id else ""
            st.info(f"Decided: **{draft.status}**{made} by {draft.decided_by}. Undo (U) takes "
                    "your latest decision back.", icon=":material/history:")  # fmt: skip
        intent = st.text_area("Intent", value=draft.intent, key=f"dq:intent:{key}", height=80,
                              disabled=not pending)  # fmt: skip
        difficulty = st.segmented_control(
            "Difficulty", [d.value for d in Difficulty], default=draft.difficulty.value,
            key=f"dq:difficulty:{key}", required=True, disabled=not pending,
        )  # fmt: skip
        st.markdown("**Reference call**")
        st.code(draft.reference_call.to_json(), language="json", wrap_lines=True)
        st.markdown("**Expected findings**")
        rows = [{"path": s.path, "lines": s.lines, "text": s.text} for s in card.spans]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
        with st.expander("Provenance", icon=":material/history:"):
            _provenance_table(card.provenance)
        done = None if pending else "Decided already: Undo (U) takes your latest decision back"
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
                                    disabled=store.last_undoable(who, kind=DRAFT) is None,
                                    help="Undo your own last draft decision (on any draft)",
                                    on_click=_undo, args=(store, who), width=1.2),
                _queue_frame.Choice("Save edit", ":material/save:", "dq:save",
                                    disabled=not pending),
            ],
            note_key=f"dq:note:{key}",
            note_placeholder="note · Enter, then A / X / S",
        )  # fmt: skip
    accept, save, reject = clicked["dq:accept"], clicked["dq:save"], clicked["dq:reject"]
    skip = clicked["dq:skip"]
    if not (accept or save or reject or skip):
        return
    note = str(st.session_state.get(f"dq:note:{key}", "")).strip()
    edited = intent.strip() != draft.intent or difficulty != draft.difficulty.value
    try:
        seen = draft.version
        if edited and not skip:
            seen = store.edit_draft(draft.id, intent=intent, difficulty=str(difficulty),
                                    seen_version=seen).version  # fmt: skip
        if accept:
            made = store.accept_draft(draft.id, who, note=note, seen_version=seen)
            st.session_state[LAST_ACCEPTED] = made
            st.session_state[FLASH] = (
                "success",
                f"Accepted: blueprint `{made}` made from the draft.",
            )
        elif reject:
            store.reject_draft(draft.id, who, note=note, seen_version=seen)
            st.session_state[FLASH] = ("success", f"Rejected draft `{draft.id}`.")
        elif skip:
            store.record_decision(draft.id, DecisionAction.SKIP, who, note, kind=DRAFT)
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
        st.session_state.pop(PINNED, None)
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
