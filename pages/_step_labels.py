"""The Episodes card's step labels (issue 39): a reviewer walks the episode's calls with J / K and
labels the current one useful (1), redundant (2) or wrong (3), which moves on to the next; each
call in the trajectory shows the reviewer's own label (others' are counted, not shown: the review
is blind). "Correct this step" edits the current step's turn, plays it again in the gym from there
(`gym.correct_step`) and sets the corrected episode beside the original on the card.
"""

from __future__ import annotations

import json
from typing import Final

import streamlit as st

from codesearch_core import gym, studio
from codesearch_core.access import Action
from codesearch_core.errors import CodesearchError
from codesearch_core.store import STEP_LABELS, StoredEpisode
from pages import _queue_frame, _shared

#: Each label's key, in `STEP_LABELS`' order.
LABEL_KEYS: Final = ("1", "2", "3")
_FLASH: Final = "ep:step_flash"


def _at(episode_id: str) -> str:
    return f"ep:step:{episode_id}"


def current(episode_id: str, count: int) -> int:
    """The index of the step the keys act on (0 when the card opens)."""
    return min(max(0, int(st.session_state.get(_at(episode_id), 0))), max(0, count - 1))


def _move(episode_id: str, count: int, by: int) -> None:
    st.session_state[_at(episode_id)] = min(max(0, current(episode_id, count) + by), count - 1)


def _label(episode_id: str, step: studio.Step, label: str, count: int) -> None:
    try:
        _shared.get_store().steps.label(episode_id, step.turn, step.call, label, _shared.reviewer())
    except CodesearchError as err:
        st.session_state[_FLASH] = ("error", f"Not labelled: {err}")
        return
    st.session_state[_FLASH] = ("success", f"Labelled {step.title} **{label}**.")
    _move(episode_id, count, 1)


def _undo(episode_id: str) -> None:
    try:
        undone = _shared.get_store().steps.undo(_shared.reviewer(), episode_id)
    except CodesearchError as err:
        st.session_state[_FLASH] = ("error", f"Nothing undone: {err}")
        return
    st.session_state[_FLASH] = ("success", f"Undone: your label **{undone.label}** of turn "
                                f"{undone.turn}, call {undone.call}.")  # fmt: skip


def _correct(episode: StoredEpisode, step: studio.Step, editor: str, compare: str, vs: str) -> None:
    try:
        calls = json.loads(st.session_state.get(editor, ""))
        made = gym.correct_step(_shared.get_store(), episode.episode_id, step.turn, calls)
    except ValueError as err:
        st.session_state[_FLASH] = ("error", f"Not re-run: the calls are not JSON ({err}).")
        return
    except CodesearchError as err:
        st.session_state[_FLASH] = ("error", f"Not re-run: {err}")
        return
    corrected = made.corrected
    # The corrected episode beside the original, on this card (`_episodes_queue._compared_with`).
    st.session_state[compare], st.session_state[vs] = True, corrected.episode_id
    kept = (
        "stored beside the original (it waits for review too)"
        if made.stored
        else ("the same correction was stored before")
    )
    st.session_state[_FLASH] = ("success", f"Turn {step.turn} corrected and played again: episode "
                                f"`{corrected.episode_id[:10]}`, reward {corrected.reward:.3f}, "
                                f"{kept}.")  # fmt: skip


def bar(
    episode: StoredEpisode, view: studio.Trajectory, who: str, *, compare: str, vs: str
) -> tuple[dict[tuple[int, int], str], tuple[int, int] | None]:
    """The step bar above the trajectory; returns the text to show beside each call, keyed by
    (turn, call), and the current step's key. `compare` and `vs` are the card's widget keys of
    its side-by-side toggle and picker (a correction opens the pair)."""
    steps = studio.steps_of(view)
    if not steps:
        return {}, None
    episode_id, count = episode.episode_id, len(steps)
    at = current(episode_id, count)
    step = steps[at]
    store = _shared.get_store()
    marks = studio.step_marks(store.steps.labels(episode_id), who)
    if said := st.session_state.pop(_FLASH, None):
        _queue_frame.flash(*said)
    refused = _shared.denial(Action.REVIEW)
    mark = marks.get((step.turn, step.call))
    st.markdown(f"**Step {at + 1} of {count}** · {step.title} · "
                f"{mark.text if mark else 'not labelled by you'}")  # fmt: skip
    row = st.columns([1.2, 1.4, 1.1, 1, 1, 1.3, 2])
    for column, label, key in zip(row, STEP_LABELS, LABEL_KEYS, strict=False):
        column.button(label.capitalize(), key=f"ep:label:{label}", shortcut=key,
                      disabled=bool(refused), help=refused or f"Label this step {label} ({key})",
                      on_click=_label, args=(episode_id, step, label, count),
                      width="stretch")  # fmt: skip
    row[3].button("Back", key="ep:step_prev", shortcut="K", icon=":material/arrow_upward:",
                  disabled=at == 0, on_click=_move, args=(episode_id, count, -1),
                  help="The previous step (K)", width="stretch")  # fmt: skip
    row[4].button("Next", key="ep:step_next", shortcut="J", icon=":material/arrow_downward:",
                  disabled=at == count - 1, on_click=_move, args=(episode_id, count, 1),
                  help="The next step (J)", width="stretch")  # fmt: skip
    row[5].button("Undo label", key="ep:label_undo", disabled=bool(refused),
                  on_click=_undo, args=(episode_id,), width="stretch",
                  help="Take back your last label on this episode")  # fmt: skip
    st.caption("Keys: **1** useful · **2** redundant · **3** wrong (then the next step) · "
               "**J** / **K** next / previous step")  # fmt: skip
    if box := _queue_frame.fold("Correct this step", key="ep:correct", icon=":material/edit:"):
        editor = f"ep:correct:{episode_id}:{step.turn}"
        st.session_state.setdefault(editor, studio.turn_calls_text(episode, step.turn))
        box.text_area(f"Turn {step.turn}'s calls (JSON: a list of name and arguments)",
                      key=editor, height=160)  # fmt: skip
        box.button("Play again from this turn", key="ep:correct_run", icon=":material/replay:",
                   disabled=bool(refused), help=refused, on_click=_correct,
                   args=(episode, step, editor, compare, vs))  # fmt: skip
    shown = {key: m.text for key, m in marks.items()}
    return shown, (step.turn, step.call)
