"""The Review page's queue picker (Proposals, Drafts, Drift: `pages/_drift_queue.py`) and its
Drafts queue: synthesized draft blueprints, one at a time, leased to the
reviewer like proposals; accept one as a blueprint, edit its intent, or reject it. Also the
provenance box the Blueprints page shows for a blueprint accepted from a draft."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from codesearch_core import studio
from codesearch_core.errors import CodesearchError
from codesearch_core.models import Difficulty
from codesearch_core.store import Draft, Store
from pages import _drift_queue, _queue_frame, _shared

QUEUE = "review:queue"
PROPOSALS, DRAFTS, DRIFT = "Proposals", "Drafts", "Drift"
LAST_ACCEPTED = "drafts:last_accepted"  # the blueprint id the reviewer's last accept made
FLASH = "drafts:flash"


def show(store: Store) -> bool:
    """Draw the queue picker; with the Drafts or the Drift queue picked, draw it and return True
    (the page then stops: the proposals' card is not drawn)."""
    wanted = {"drafts": DRAFTS, "drift": DRIFT}.get(
        st.query_params.get(_queue_frame.QUEUE_PARAM, "")
    )
    if wanted and QUEUE not in st.session_state:
        st.session_state[QUEUE] = wanted
    counts = {DRAFTS: store.draft_counts()["pending"], DRIFT: len(store.open_drift())}
    choice = st.segmented_control(
        "Queue", [PROPOSALS, DRAFTS, DRIFT], default=PROPOSALS, key=QUEUE, required=True,
        format_func=lambda q: f"{q} ({counts[q]})" if q in counts else q,
    )  # fmt: skip
    _queue_frame.address_queue(str(choice).lower())
    if choice == DRAFTS:
        _queue(store)
        return True
    if choice == DRIFT:
        _drift_queue.draw(store)
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
        draft_id = store.lease_next_draft(who)
        draft = store.get_draft(draft_id) if draft_id else None
        if draft is None:
            st.info("No drafts left to review: make some on the Synthesize page.",
                    icon=":material/inbox:")  # fmt: skip
            return
        _card(store, draft, who, counts)


def _card(store: Store, draft: Draft, who: str, counts: dict[str, int]) -> None:
    card = studio.draft_card(draft)
    key = f"{draft.id}:{draft.version}"
    decided = counts["accepted"] + counts["rejected"]
    with st.container(border=True):
        _queue_frame.position(f"Draft {decided + 1} of {decided + counts['pending']}",
                              f"{counts['pending']} pending")  # fmt: skip
        st.markdown(f"**{draft.corpus}** · `{draft.language}` · rule `{draft.rule}` · "
                    f"{len(draft.expected)} findings in {card.files} files")  # fmt: skip
        intent = st.text_area("Intent", value=draft.intent, key=f"dq:intent:{key}", height=80)
        difficulty = st.segmented_control(
            "Difficulty", [d.value for d in Difficulty], default=draft.difficulty.value,
            key=f"dq:difficulty:{key}", required=True,
        )  # fmt: skip
        st.markdown("**Reference call**")
        st.code(draft.reference_call.to_json(), language="json", wrap_lines=True)
        st.markdown("**Expected findings**")
        rows = [{"path": s.path, "lines": s.lines, "text": s.text} for s in card.spans]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
        with st.expander("Provenance", icon=":material/history:"):
            _provenance_table(card.provenance)
        clicked = _queue_frame.action_row(
            [
                _queue_frame.Choice("Accept as blueprint", ":material/check:", "dq:accept",
                                    word="accept", shortcut="A", primary=True, width=2.0),
                _queue_frame.Choice("Reject", ":material/close:", "dq:reject", shortcut="X"),
                _queue_frame.Choice("Save edit", ":material/save:", "dq:save"),
            ],
            note_key=f"dq:note:{key}",
            note_placeholder="note · Enter, then A / X",
        )  # fmt: skip
    accept, save, reject = clicked["dq:accept"], clicked["dq:save"], clicked["dq:reject"]
    if not (accept or save or reject):
        return
    note = str(st.session_state.get(f"dq:note:{key}", "")).strip()
    edited = intent.strip() != draft.intent or difficulty != draft.difficulty.value
    try:
        seen = draft.version
        if edited:
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
        else:
            st.session_state[FLASH] = ("success", "Saved the edit; the draft stays in the queue.")
    except CodesearchError as err:
        st.error(f"Not done: {err}", icon=":material/error:")
        return
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
