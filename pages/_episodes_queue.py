"""The Review page's Episodes queue (issue 30): the gym's kept episodes, one at a time in the card
frame every queue shares (`pages/_queue_frame.py`), leased and voted like proposals: each reviewer's
vote is theirs, an episode settles when it has the reviews the store asks for, reviewers who
disagree put it in conflict for a lead. The card shows the blueprint's intent and the trajectory
view (`pages/_trajectory.py`); A accepts, X rejects, S skips, U undoes the reviewer's last decision.
The episode on the card is in the address (`?queue=episodes&item=ID`), so a reload resumes it.
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
from codesearch_core.store import EPISODE, StaleDecisionError, Store
from pages import _queue_frame, _shared, _trajectory

CURRENT: Final = "episodes:current"  # the episode id on the card
#: An episode shown as it is, decided or not (an undo brought it back, a link or Back named it).
PINNED: Final = "episodes:pinned"
ADDRESSED: Final = "episodes:addressed"  # the episode the page last put in the address
FLASH: Final = "episodes:flash"  # the last action's message: (kind, text)
#: The address parameter of the page of turns the trajectory view shows.
TURNS_PARAM: Final = "turns"
_WORDS: Final = {
    DecisionAction.ACCEPT: "Accepted",
    DecisionAction.REJECT: "Rejected",
    DecisionAction.SKIP: "Skipped",
}


def draw(store: Store, counts: Mapping[str, int]) -> None:
    """The queue; `counts` are the store's `episode_counts()`, read once by the queue picker."""
    st.caption(
        f"Episodes: {counts['open']} open · {counts['accept']} accepted · "
        f"{counts['reject']} rejected · {counts['conflict']} in conflict"
    )
    if counts["conflict"]:
        # Conflicts are never leased (nobody's to-do): a lead opens them here to settle them.
        not_lead = _shared.denial(Action.RESOLVE)
        st.button(f"Settle the next episode in conflict ({counts['conflict']})",
                  icon=":material/gavel:", key="ep:conflicts", on_click=_open_conflict,
                  disabled=bool(not_lead), help=not_lead)  # fmt: skip
    if flash := st.session_state.pop(FLASH, None):
        _queue_frame.flash(*flash)
    who = _shared.reviewer()
    if not who:
        st.info("Type your name in the sidebar to review episodes.", icon=":material/person:")
        return
    with _shared.shown_errors():
        card = _current(store, who)
        if card is None:
            _empty(store, who)
        else:
            _card(store, card, who)


def _current(store: Store, who: str) -> studio.EpisodeCard | None:
    """The episode for the card: the one the address names (a reload, a link, Back), the one on
    the card while it is still to do, else the next one leased to the reviewer."""
    addressed = st.query_params.get(studio.ITEM_PARAM)
    if addressed and addressed != st.session_state.get(ADDRESSED):
        st.session_state[CURRENT] = st.session_state[PINNED] = addressed
    item_id = st.session_state.get(CURRENT)
    card = studio.episode_card(store, item_id) if item_id else None
    pinned = card is not None and card.episode_id == st.session_state.get(PINNED)
    if card is not None and studio.still_to_do_episode(card, who):
        store.take_lease(card.episode_id, who, kind=EPISODE)  # a reload or a link: keep it ours
    elif card is not None and not pinned:
        card = None  # decided meanwhile (another tab, another reviewer): not to do any more
    if card is None:
        st.session_state.pop(PINNED, None)
        item_id = studio.next_episode_id(store, who)
        st.session_state[CURRENT] = item_id
        card = studio.episode_card(store, item_id) if item_id else None
    shown = card.episode_id if card else None
    _shared.sync_params({studio.ITEM_PARAM: shown})
    st.session_state[ADDRESSED] = shown
    return card


def _step(episode_id: str | None) -> None:
    """Previous / Next: an episode the reviewer decided, as it is; None: the next one to do."""
    if episode_id is None:
        st.session_state.pop(PINNED, None)
        st.session_state[CURRENT] = None
    else:
        st.session_state[CURRENT] = st.session_state[PINNED] = episode_id


def _empty(store: Store, who: str) -> None:
    _queue_frame.step_row(store.seen_items(who, kind=EPISODE), None, key="episodes", on_step=_step)
    st.info(
        "No episodes left to review. Episodes are made by "
        f"`{studio.ROLLOUTS_COMMAND}`, or by **Roll out episodes** on the Propose page.",
        icon=":material/inbox:",
    )
    if store.last_undoable(who, kind=EPISODE):
        st.button("Undo last decision", icon=":material/undo:", shortcut="U", on_click=_undo,
                  key="ep:undo_empty")  # fmt: skip


# --- actions (callbacks: they run before the card is drawn again) -------------------------------


def _note_key(episode_id: str) -> str:
    return f"ep:note:{episode_id}"


def _decide(episode_id: str, action: DecisionAction, seen: int | None, final: bool = False) -> None:
    store = _shared.get_store()
    note = str(st.session_state.get(_note_key(episode_id), "")).strip()
    try:
        store.record_decision(
            episode_id, action, _shared.reviewer(), note=note, seen=seen, final=final,
            kind=EPISODE,
        )  # fmt: skip
    except StaleDecisionError as err:
        # Another tab of this reviewer decided it: the next episode, with why.
        st.session_state[CURRENT] = None
        st.session_state[FLASH] = ("warning", str(err))
        return
    except CodesearchError as err:
        # Nothing was written: the card stays, with the reason.
        st.session_state[FLASH] = ("error", f"Not done: {err}")
        return
    st.session_state.pop(PINNED, None)
    st.session_state[CURRENT] = None
    said = f" with the note “{note}”" if note else ""
    final_word = "Final: " if final else ""
    st.session_state[FLASH] = (
        "success",
        f"{final_word}{_WORDS[action]} episode `{episode_id[:10]}`{said}.",
    )


def _open_conflict() -> None:
    in_conflict = _shared.get_store().episodes(decision="conflict", limit=1)
    if in_conflict:
        st.session_state[CURRENT] = st.session_state[PINNED] = in_conflict[0].episode_id


def _undo() -> None:
    store = _shared.get_store()
    try:
        episode_id, _ = store.undo_last(_shared.reviewer(), kind=EPISODE)
    except CodesearchError as err:
        st.session_state[FLASH] = ("error", f"Not done: {err}")
        return
    st.session_state[CURRENT] = st.session_state[PINNED] = episode_id
    st.session_state[FLASH] = (
        "success",
        f"Undone: episode `{episode_id[:10]}` is back on the card.",
    )


# --- the card -----------------------------------------------------------------------------------


def _card(store: Store, card: studio.EpisodeCard, who: str) -> None:
    ep = card.episode
    done, share = store.queue_progress(who, kind=EPISODE)
    mine = card.vote_of(who)
    with st.container(border=True):
        at = done if mine else done + 1
        _queue_frame.position(f"Episode {min(at, share)} of {share}", f"{share - done} left")
        _queue_frame.progress(done, share)
        _queue_frame.step_row(
            store.seen_items(who, kind=EPISODE), card.episode_id, key="episodes", on_step=_step
        )
        state = {"accept": "accepted", "reject": "rejected", "conflict": "in conflict"}
        reviews = " · ".join(f"{r} **{a}**" for r, (a, _) in card.votes.items()) or "none yet"
        st.caption(
            f"Episode `{card.episode_id[:10]}` · {ep.engine}"
            + (f" · {ep.model}" if ep.model and ep.model != ep.engine else "")
            + f" · reviews: {reviews} · episode **{state.get(card.state or '', 'open')}**"
        )
        if card.blueprint is not None:
            st.subheader(card.blueprint.intent, anchor=False)
        _actions(card, store.last_undoable(who, kind=EPISODE) is not None, mine)
    _trajectory.show(
        ep,
        blueprint=card.blueprint,
        key="ep:traj",
        page_param=TURNS_PARAM,
        intent=False,  # the card's heading shows it
    )
    with st.expander("History", icon=":material/history:"):
        if card.history:
            rows = [
                {"when (UTC)": e.ts, "action": e.action.value, "reviewer": e.reviewer,
                 "note": e.note, "final": e.final, "undone": e.undone}
                for e in card.history
            ]  # fmt: skip
            st.dataframe(pd.DataFrame(rows), hide_index=True)
        else:
            st.caption("No decisions yet.")


def _actions(card: studio.EpisodeCard, can_undo: bool, mine: tuple[str, int] | None) -> None:
    episode_id = card.episode_id
    refused = _shared.denial(Action.REVIEW)
    why = card.blocker
    seen = mine[1] if mine else None
    # Said in view, next to the greyed button: A on a greyed Accept does nothing (issue 29).
    blocked = f":red[**Cannot be accepted.** {why}]" if why else None
    _queue_frame.action_row(
        [
            _queue_frame.Choice(
                "Accept", ":material/check:", "ep:accept", shortcut="A", primary=True,
                disabled=bool(refused) or why is not None, help=why or refused, on_click=_decide,
                args=(episode_id, DecisionAction.ACCEPT, seen), width=1.5,
            ),
            _queue_frame.Choice(
                "Reject", ":material/close:", "ep:reject", shortcut="X", disabled=bool(refused),
                help=refused, on_click=_decide, args=(episode_id, DecisionAction.REJECT, seen),
                width=1.5,
            ),
            _queue_frame.Choice(
                "Skip", ":material/skip_next:", "ep:skip", shortcut="S", disabled=bool(refused),
                help=refused, on_click=_decide, args=(episode_id, DecisionAction.SKIP, seen),
                width=1.3,
            ),
            _queue_frame.Choice(
                "Undo", ":material/undo:", "ep:undo", shortcut="U", disabled=not can_undo,
                on_click=_undo, help="Undo your own last decision on an episode", width=1.3,
            ),
        ],
        note_key=_note_key(episode_id),
        note_placeholder="note · Enter, then A / X / S",
        blocked=blocked,
    )  # fmt: skip
    if card.state == "conflict":
        _queue_frame.final_row("episode", episode_id, key="ep:", decide=_decide,
                               accept_blocked=why)  # fmt: skip
