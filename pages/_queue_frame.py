"""The frame every Review queue's card shares (Proposals, Conflicts, Drafts, Drift, Episodes, QA):
where you are in the queue, the action row with its keys, the note and the reject's reason, the
last action's message, and the queue in the address. Each queue draws what is inside the frame; the
frame is the same everywhere, so a reviewer who knows A / X / S / U on one queue knows them on all
(issue 29: the Drafts queue ignored them and said nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

import pandas as pd
import streamlit as st

from codesearch_core.access import Action
from codesearch_core.models import DecisionAction
from codesearch_core.store import DecisionEvent
from pages import _guidelines, _layout, _shared

#: The queue on the card, in the address (`?queue=drafts`): a reload, a link or Back keeps it.
QUEUE_PARAM: Final = "queue"


@dataclass(frozen=True)
class Choice:
    """One button of the action row. `word` is what its key does, for the hint line."""

    label: str
    icon: str
    key: str
    word: str = ""
    shortcut: str | None = None
    primary: bool = False
    disabled: bool = False
    help: str | None = None
    on_click: Callable[..., None] | None = None
    args: tuple[Any, ...] = ()
    width: float = 1.4


@dataclass(frozen=True)
class Reasons:
    """The reject's reason picker beside the note: the reasons offered (`studio.reject_reasons`),
    its widget key (the flow reads the pick from it when X is pressed), and its prompt. None is
    required, as on every queue: the note can say it instead."""

    options: Sequence[str]
    key: str
    prompt: str = "reject reason"


@dataclass(frozen=True)
class Conflict:
    """An item in conflict on the card: the action row's A and X become a lead's final decisions
    (`decide(item_id, action, None, True)`), where they used to cast one more ordinary vote that
    could not settle it (issue 39). `what` names the item in the warning; `key` prefixes the
    buttons' keys (`{key}final_accept`)."""

    what: str
    item_id: str
    key: str
    decide: Callable[..., None]
    accept_blocked: str | None = None
    can_decide: bool = True


def _settling(choices: Sequence[Choice], conflict: Conflict) -> list[Choice]:
    """The row with its A and X choices turned into Final: accept and Final: reject, and the
    warning that says who may use them."""
    not_lead = _shared.denial(Action.RESOLVE)
    st.warning(f"Reviewers disagree on this {conflict.what}. A lead's final decision settles it"
               + (f" ({not_lead})." if not_lead else ": **A** final accept, **X** final reject."),
               icon=":material/gavel:")  # fmt: skip
    finals = {
        "A": ("accept", DecisionAction.ACCEPT, conflict.accept_blocked),
        "X": ("reject", DecisionAction.REJECT, None),
    }
    row = []
    for c in choices:
        if c.shortcut not in finals:
            row.append(c)
            continue
        word, action, blocked = finals[c.shortcut]
        row.append(
            replace(
                c, label=f"Final: {word}", icon=":material/gavel:",
                key=f"{conflict.key}final_{word}", word=f"final {word}",
                disabled=not conflict.can_decide or blocked is not None or bool(not_lead),
                help=not_lead or blocked, on_click=conflict.decide,
                args=(conflict.item_id, action, None, True),
                width=max(c.width, 1.9),  # "Final: accept" whole beside a reject reason
            )
        )  # fmt: skip
    return row


def position(where: str, left: str) -> None:
    """The card's first line: which item of how many, and how many are left; under it the
    project's guidelines, folded (every queue's card draws this, so every queue shows them)."""
    st.markdown(f"#### {where} · {left}")
    _guidelines.folded()


def progress(done: int, share: int) -> None:
    """The reviewer's progress in this queue: the items they decided (skips too) of their share
    (those plus the ones still to do for them), as reviewers know it from other tools."""
    if share:
        st.progress(done / share, text=f"Your progress: {done} of {share} done")


def step_row(
    seen_items: Sequence[tuple[str, str | None]],
    current: str | None,
    *,
    key: str,
    on_step: Callable[[str | None], None],
) -> None:
    """Previous and Next (keys ← and →) over the items this reviewer decided in this queue, in
    the order they first did: an earlier item shows as it is, with their decision, and can be
    decided again. Next past the last one returns to the items still to do (`on_step(None)`).
    Undo takes a decision back; this only steps, so nothing is decided twice. `seen_items`:
    `Queue.seen` of the reviewer in this queue."""
    seen = [item_id for item_id, _ in seen_items]
    if not seen:
        return  # nothing decided here yet: two greyed buttons would only be in the way
    if current in seen:
        at = seen.index(current)
        earlier = seen[at - 1] if at else None
        where = f"decided item {at + 1} of {len(seen)}"
    else:
        at, earlier, where = len(seen), (seen[-1] if seen else None), ""
    # Wide enough that a 900 px window keeps the words, not only the arrows.
    back, forward, caption = st.columns([2, 2, 5], vertical_alignment="center")
    back.button("Previous", icon=":material/arrow_back:", key=f"{key}:previous", shortcut="Left",
                disabled=earlier is None, on_click=on_step, args=(earlier,),
                help="The item you decided before this one")  # fmt: skip
    later = seen[at + 1] if at + 1 < len(seen) else None
    forward.button("Next", icon=":material/arrow_forward:", key=f"{key}:next", shortcut="Right",
                   disabled=current not in seen, on_click=on_step, args=(later,),
                   help="The item you decided after this one, then the next one to do")  # fmt: skip
    if where:
        caption.caption(f"Stepping back: {where} · **→** goes on")


def action_row(
    choices: Sequence[Choice],
    *,
    note_key: str,
    note_placeholder: str = "note · Enter, then a key",
    reasons: Reasons | None = None,
    blocked: str | None = None,
    conflict: Conflict | None = None,
) -> Mapping[str, bool]:
    """The buttons, the note and the reject's reason picker (`reasons`) on one row, under it why
    a greyed button is greyed (`blocked`, markdown) and the key hints; returns which buttons were
    clicked this run, by key. An item in `conflict`: A and X are a lead's final decisions."""
    if conflict is not None:
        choices = _settling(choices, conflict)
    widths = [c.width for c in choices] + [2.6] + ([2.2] if reasons and reasons.options else [])
    # Keyed, so a narrow window wraps the row instead of cutting "Reject" to "rejec" (_layout).
    st.html(_layout.ACTION_ROW_CSS)
    columns = st.container(key=_layout.ACTION_ROW_KEY).columns(widths, vertical_alignment="center")
    clicked: dict[str, bool] = {}
    for column, c in zip(columns, choices, strict=False):
        clicked[c.key] = column.button(
            c.label, icon=c.icon, key=c.key, type="primary" if c.primary else "secondary",
            shortcut=c.shortcut, disabled=c.disabled, help=c.help, on_click=c.on_click,
            args=c.args, width="stretch",
        )  # fmt: skip
    columns[len(choices)].text_input(
        "Note", key=note_key, placeholder=note_placeholder, label_visibility="collapsed",
        help="Letters typed here are the note's. Enter or Esc keeps the note and hands the keys "
        "back to the card.",
    )  # fmt: skip
    if reasons and reasons.options:
        columns[-1].selectbox(
            reasons.prompt, reasons.options, index=None, key=reasons.key,
            placeholder=f"{reasons.prompt} (optional)", label_visibility="collapsed",
        )  # fmt: skip
    if blocked:
        st.markdown(blocked)
    hints = [f"**{c.shortcut}** {c.word or c.label.lower()}" for c in choices if c.shortcut]
    if hints:
        st.caption("Keys: " + " · ".join(hints) + " · **Enter** or **Esc** leaves the note")
    _layout.keys_leave_fields()
    return clicked


def flash(kind: str, text: str) -> None:
    """The last action's message, in view at the top of the card: a toast is easily missed when a
    key, not a click, did the action. "toast": a small note in the corner instead (how the
    Proposals queue says its decisions)."""
    if kind == "toast":
        st.toast(text, icon=":material/check:")
    elif kind == "warning":
        st.warning(text, icon=":material/tab:")
    elif kind == "error":
        st.error(text, icon=":material/error:")
    else:
        st.success(text, icon=":material/task_alt:")


def address_queue(queue: str) -> None:
    """Put the queue on the card in the address (the Proposals queue is the page's default)."""
    _shared.sync_params({QUEUE_PARAM: None if queue == "proposals" else queue})


def fold(label: str, key: str, icon: str | None = None) -> Any | None:
    """A folded section of the card whose content is built only while it is open: the container
    to draw into, or None while it is shut. A plain `st.expander` builds its content on every
    card, shut or not (the History table cost about 30 ms of each card). The key is the same on
    every card, so a reviewer who keeps History open sees it open on the next one too."""
    box = st.expander(label, icon=icon, key=key, on_change="rerun")
    return box if box.open else None


def history(
    key: str,
    events: Sequence[DecisionEvent],
    more: Callable[[], None] | None = None,
    label: str = "History",
) -> None:
    """The item's decision log, folded (`fold`): every event, undone or not, with the guidelines
    it was made under; `more` draws what else the fold holds (a proposal's raw answer)."""
    box = fold(label, key, ":material/history:")
    if box is None:
        return
    with box:
        if events:
            rows = [
                {"when (UTC)": e.ts, "action": e.action.value, "reviewer": e.reviewer,
                 "reason": e.reason, "note": e.note, "final": e.final, "undone": e.undone,
                 "guidelines": f"v{e.guideline_version}" if e.guideline_version else ""}
                for e in events
            ]  # fmt: skip
            st.dataframe(pd.DataFrame(rows), hide_index=True)
            if versions := sorted({e.guideline_version for e in events if e.guideline_version}):
                st.caption("Decided under guidelines " + ", ".join(f"v{v}" for v in versions))
        else:
            st.caption("No decisions yet.")
        if more is not None:
            more()
