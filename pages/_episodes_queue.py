"""The Review page's Episodes queue (issue 30): the gym's kept episodes, one at a time in the card
frame every queue shares (`pages/_queue_frame.py`), leased and voted like proposals: each reviewer's
vote is theirs, an episode settles when it has the reviews the store asks for, reviewers who
disagree put it in conflict for a lead. The card shows the blueprint's intent and the trajectory
view (`pages/_trajectory.py`), or, asked for, the episode beside another of its task
(`pages/_side_by_side.py`, `&vs=ID` in the address); A accepts, X rejects, S skips, U undoes the
reviewer's last decision. The episode on the card is in the address (`?queue=episodes&item=ID`), so
a reload resumes it; which episode is on the card, and the callbacks of its buttons, are
`pages/_item_queue.py`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import streamlit as st

from codesearch_core import studio
from codesearch_core.access import Action
from codesearch_core.models import DecisionAction
from codesearch_core.store import EPISODE, Store, StoredEpisode
from pages import (
    _history,
    _item_queue,
    _queue_frame,
    _shared,
    _side_by_side,
    _step_labels,
    _trajectory,
)

#: The address parameter of the page of turns the trajectory view shows.
TURNS_PARAM: Final = "turns"
#: The address parameter of the episode set beside the card's (side by side).
COMPARE_PARAM: Final = "vs"


QUEUE: Final = _item_queue.ItemQueue[studio.EpisodeCard](
    kind=EPISODE, state="episodes", widgets="ep", noun="episode",
    words={DecisionAction.ACCEPT: "Accepted", DecisionAction.REJECT: "Rejected",
           DecisionAction.SKIP: "Skipped"},
    load=studio.episode_card, id_of=lambda c: c.episode_id,
    short=lambda i: i[:10],
)  # fmt: skip


def draw(store: Store, counts: Mapping[str, int], *, settling: bool = False) -> None:
    """The queue; `counts` are the queue's `counts()`, read once by the queue picker. `settling`:
    the Conflicts entry's card (the episodes in conflict, a lead's final decisions)."""
    st.caption(
        f"Episodes: {counts['open']} open · {counts['accept']} accepted · "
        f"{counts['reject']} rejected · {counts['conflict']} in conflict"
    )
    # The filter, e.g. "max_reward=0.99", "tool_used=read_file"; in bulk, "engine=reference
    # min_reward=1": the verified reference episodes in one batch.
    QUEUE.draw(
        store, conflicts=counts["conflict"], plural="episodes", card=_card, settling=settling,
        empty="No episodes left to review. Episodes are made by "
        f"`{studio.ROLLOUTS_COMMAND}`, or by **Roll out episodes** on the Propose page.",
    )  # fmt: skip


# --- the card -----------------------------------------------------------------------------------


def _card(store: Store, card: studio.EpisodeCard, who: str) -> None:
    ep = card.episode
    mine = card.vote_of(who)
    with st.container(border=True):
        QUEUE.place(store, card.episode_id, who, "Episode")
        state = {"accept": "accepted", "reject": "rejected", "conflict": "in conflict"}
        reviews, history = studio.reviews_seen(card, who)
        st.caption(
            f"Episode `{card.episode_id[:10]}` · {ep.engine}"
            + (f" · {ep.model}" if ep.model and ep.model != ep.engine else "")
            + f" · reviews: {reviews} · episode **{state.get(card.state or '', 'open')}**"
        )
        if card.blueprint is not None:
            st.subheader(card.blueprint.intent, anchor=False)
        _actions(card, store.queue(EPISODE).last_undoable(who) is not None, mine)
    view = studio.episode_trajectory(ep, card.blueprint)
    marks, current = _step_labels.bar(ep, view, who, compare=_compare_key(card),
                                      vs=_picker_key(card))  # fmt: skip
    other = _compared_with(store, card)
    if other is None:
        _trajectory.show(
            view,
            key="ep:traj",
            page_param=TURNS_PARAM,
            intent=False,  # the card's heading shows it
            marks=marks,
            current=current,
        )
    else:
        _side_by_side.show(
            view,
            studio.episode_trajectory(other, card.blueprint),
            key="ep:pair",
            page_param=TURNS_PARAM,
        )
    _queue_frame.history("ep:history", history)


def _compare_key(card: studio.EpisodeCard) -> str:
    return f"ep:compare:{card.episode_id}"


def _picker_key(card: studio.EpisodeCard) -> str:
    return f"ep:vs:{card.episode_id}"


def _compared_with(store: Store, card: studio.EpisodeCard) -> StoredEpisode | None:
    """The episode of the same task the reviewer set beside this one (its id in the address, so a
    link and a reload reopen the pair), or None. The other episodes are read only once asked for:
    most cards are judged alone, and the card's speed is the queue's (issue 41)."""
    toggle = _compare_key(card)
    addressed = st.query_params.get(COMPARE_PARAM)
    # The address's pair opens only on its own task's card: the next card starts alone.
    if addressed and toggle not in st.session_state:
        named = store.episodes.get(addressed)
        st.session_state[toggle] = (
            named is not None and named.blueprint_id == card.episode.blueprint_id
        )
    if not st.toggle("Compare with another episode of this task", key=toggle):
        _history.write_address(COMPARE_PARAM, None)
        return None
    others = {e.episode_id: e for e in studio.other_episodes(store, card.episode)}
    if not others:
        st.caption("No other episode of this task is stored: roll it out again "
                   f"(`{studio.ROLLOUTS_COMMAND}` with `--k 2`) or with another engine.")  # fmt: skip
        return None
    picker = _picker_key(card)
    _history.follow_address(COMPARE_PARAM, picker, list(others))
    other_id = st.selectbox("Beside", list(others), key=picker,
                            format_func=lambda i: studio.episode_label(others[i]))  # fmt: skip
    _history.write_address(COMPARE_PARAM, other_id)
    return others.get(other_id or "")


def _actions(card: studio.EpisodeCard, can_undo: bool, mine: tuple[str, int] | None) -> None:
    QUEUE.action_row(
        card.episode_id, mine[1] if mine else None, can_undo=can_undo,
        undo_help="Undo your own last decision on an episode", refused=_shared.denial(Action.REVIEW),
        blocked=card.blocker, in_conflict=card.state == "conflict",
    )  # fmt: skip
