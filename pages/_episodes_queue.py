"""The Review page's Episodes queue (issue 30): the gym's kept episodes, one at a time in the card
frame every queue shares (`pages/_queue_frame.py`), leased and voted like proposals: each reviewer's
vote is theirs, an episode settles when it has the reviews the store asks for, reviewers who
disagree put it in conflict for a lead. The card shows the blueprint's intent and the trajectory
view (`pages/_trajectory.py`); A accepts, X rejects, S skips, U undoes the reviewer's last decision.
The episode on the card is in the address (`?queue=episodes&item=ID`), so a reload resumes it;
which episode is on the card, and the callbacks of its buttons, are `pages/_item_queue.py`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import streamlit as st

from codesearch_core import studio
from codesearch_core.access import Action
from codesearch_core.models import DecisionAction
from codesearch_core.store import EPISODE, Store
from pages import _item_queue, _queue_frame, _shared, _trajectory

#: The address parameter of the page of turns the trajectory view shows.
TURNS_PARAM: Final = "turns"


QUEUE: Final = _item_queue.ItemQueue[studio.EpisodeCard](
    kind=EPISODE, state="episodes", widgets="ep", noun="episode",
    words={DecisionAction.ACCEPT: "Accepted", DecisionAction.REJECT: "Rejected",
           DecisionAction.SKIP: "Skipped"},
    load=studio.episode_card, id_of=lambda c: c.episode_id,
    next_id=studio.next_episode_id,
    short=lambda i: i[:10],
)  # fmt: skip


def draw(store: Store, counts: Mapping[str, int]) -> None:
    """The queue; `counts` are the store's `episode_counts()`, read once by the queue picker."""
    st.caption(
        f"Episodes: {counts['open']} open · {counts['accept']} accepted · "
        f"{counts['reject']} rejected · {counts['conflict']} in conflict"
    )
    QUEUE.draw(
        store, conflicts=counts["conflict"], plural="episodes", card=_card,
        empty="No episodes left to review. Episodes are made by "
        f"`{studio.ROLLOUTS_COMMAND}`, or by **Roll out episodes** on the Propose page.",
    )  # fmt: skip


# --- the card -----------------------------------------------------------------------------------


def _card(store: Store, card: studio.EpisodeCard, who: str) -> None:
    ep = card.episode
    done, share = store.queue_progress(who, kind=EPISODE)
    mine = card.vote_of(who)
    seen = store.seen_items(who, kind=EPISODE)
    with st.container(border=True):
        at = studio.queue_place(seen, card.episode_id, done)
        _queue_frame.position(f"Episode {min(at, share)} of {share}", f"{share - done} left")
        _queue_frame.progress(done, share)
        _queue_frame.step_row(seen, card.episode_id, key="episodes", on_step=QUEUE.step)
        state = {"accept": "accepted", "reject": "rejected", "conflict": "in conflict"}
        reviews, history = studio.reviews_seen(card, who)
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
    _queue_frame.history("ep:history", history)


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
                disabled=bool(refused) or why is not None, help=why or refused, on_click=QUEUE.decide,
                args=(episode_id, DecisionAction.ACCEPT, seen), width=1.5,
            ),
            _queue_frame.Choice(
                "Reject", ":material/close:", "ep:reject", shortcut="X", disabled=bool(refused),
                help=refused, on_click=QUEUE.decide, args=(episode_id, DecisionAction.REJECT, seen),
                width=1.5,
            ),
            _queue_frame.Choice(
                "Skip", ":material/skip_next:", "ep:skip", shortcut="S", disabled=bool(refused),
                help=refused, on_click=QUEUE.decide, args=(episode_id, DecisionAction.SKIP, seen),
                width=1.3,
            ),
            _queue_frame.Choice(
                "Undo", ":material/undo:", "ep:undo", shortcut="U", disabled=not can_undo,
                on_click=QUEUE.undo, help="Undo your own last decision on an episode", width=1.3,
            ),
        ],
        note_key=QUEUE.note_key(episode_id),
        note_placeholder="note · Enter, then A / X / S",
        blocked=blocked,
        conflict=_queue_frame.Conflict("episode", episode_id, "ep:", QUEUE.decide, why)
        if card.state == "conflict" else None,
    )  # fmt: skip
