"""Which item a Review queue shows on its card, and the callbacks that decide, undo, step and open a
conflict, for the queues whose items are reviewed as they are (Episodes, QA). Each such queue
describes itself once (`ItemQueue`); the card it draws inside the shared frame
(`pages/_queue_frame.py`) is its own.

The item on the card is in the address (`?item=ID`), so a reload, a link or Back resumes it; an
item the reviewer stepped back to (Previous), or that Undo or a lead's conflict button brought, is
*pinned*: shown as it is, decided or not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

import streamlit as st

from codesearch_core import studio
from codesearch_core.access import Action
from codesearch_core.errors import CodesearchError
from codesearch_core.models import DecisionAction
from codesearch_core.store import StaleDecisionError, Store
from pages import _queue_frame, _shared

C = TypeVar("C", bound=studio.QueueCard)


@dataclass(frozen=True)
class ItemQueue(Generic[C]):
    """One queue: its kind of item, its session-state and widget key prefixes, the word for its
    items in messages, and how the studio loads a card, names it, and says it is still to do."""

    kind: str
    state: str  # session-state keys: "{state}:current", ...
    widgets: str  # widget keys: "{widgets}:note:{id}", "{widgets}:reason:{id}"
    noun: str  # "episode", "item": what the messages call one
    words: Mapping[DecisionAction, str]  # the message's first word for each decision
    load: Callable[[Store, str], C | None]
    id_of: Callable[[C], str]
    next_id: Callable[[Store, str], str | None]
    #: How a message names an item (a 64-character episode id: its first 10).
    short: Callable[[str], str] = str
    #: Said after "No {noun} `ID` in this store" when an address names an item that is not there.
    missing_hint: str = ""

    @property
    def current_key(self) -> str:
        return f"{self.state}:current"

    @property
    def pinned_key(self) -> str:
        return f"{self.state}:pinned"

    @property
    def flash_key(self) -> str:
        return f"{self.state}:flash"

    def note_key(self, item_id: str) -> str:
        return f"{self.widgets}:note:{item_id}"

    def reason_key(self, item_id: str) -> str:
        return f"{self.widgets}:reason:{item_id}"

    def current(self, store: Store, who: str) -> C | None:
        """The item for the card: the one the address names (a reload, a link, Back), the one on
        the card while it is still to do, else the next one leased to the reviewer."""
        addressed = st.query_params.get(studio.ITEM_PARAM)
        if addressed and addressed != st.session_state.get(f"{self.state}:addressed"):
            st.session_state[self.current_key] = st.session_state[self.pinned_key] = addressed
        item_id = st.session_state.get(self.current_key)
        card = self.load(store, item_id) if item_id else None
        if item_id and card is None and item_id == addressed:
            st.warning(f"No {self.noun} `{item_id}` in this store{self.missing_hint}: the next "
                       "one to do instead.", icon=":material/search_off:")  # fmt: skip
        pinned = card is not None and self.id_of(card) == st.session_state.get(self.pinned_key)
        if card is not None and studio.still_to_do(card, who):
            store.take_lease(self.id_of(card), who, kind=self.kind)  # a reload or a link
        elif card is not None and not pinned:
            card = None  # decided meanwhile (another tab, another reviewer): not to do any more
        if card is None:
            st.session_state.pop(self.pinned_key, None)
            item_id = self.next_id(store, who)
            st.session_state[self.current_key] = item_id
            card = self.load(store, item_id) if item_id else None
        shown = self.id_of(card) if card is not None else None
        _shared.sync_params({studio.ITEM_PARAM: shown})
        st.session_state[f"{self.state}:addressed"] = shown
        return card

    def draw(
        self,
        store: Store,
        *,
        conflicts: int,
        plural: str,
        empty: str,
        card: Callable[[Store, C, str], None],
    ) -> None:
        """Under the queue's caption: a lead's button to the next item in conflict, the last
        action's message, then the card `card` draws, or, with nothing left to do, `empty` (what
        makes more) with Undo."""
        if conflicts:
            # Conflicts are never leased (nobody's to-do): a lead opens them here to settle them.
            not_lead = _shared.denial(Action.RESOLVE)
            st.button(f"Settle the next {self.noun} in conflict ({conflicts})",
                      icon=":material/gavel:", key=f"{self.widgets}:conflicts",
                      on_click=self.open_conflict, disabled=bool(not_lead),
                      help=not_lead)  # fmt: skip
        self.flash()
        who = _shared.reviewer()
        if not who:
            st.info(f"Type your name in the sidebar to review {plural}.", icon=":material/person:")
            return
        with _shared.shown_errors():
            shown = self.current(store, who)
            if shown is not None:
                card(store, shown, who)
                return
            _queue_frame.step_row(store.seen_items(who, kind=self.kind), None, key=self.state,
                                  on_step=self.step)  # fmt: skip
            st.info(empty, icon=":material/inbox:")
            if store.last_undoable(who, kind=self.kind):
                st.button("Undo last decision", icon=":material/undo:", shortcut="U",
                          on_click=self.undo, key=f"{self.widgets}:undo_empty")  # fmt: skip

    def flash(self) -> None:
        """The last action's message, once."""
        if said := st.session_state.pop(self.flash_key, None):
            _queue_frame.flash(*said)

    # --- callbacks: they run before the card is drawn again -------------------------------------

    def step(self, item_id: str | None) -> None:
        """Previous / Next: an item the reviewer decided, as it is; None: the next one to do."""
        if item_id is None:
            st.session_state.pop(self.pinned_key, None)
            st.session_state[self.current_key] = None
        else:
            st.session_state[self.current_key] = st.session_state[self.pinned_key] = item_id

    def decide(
        self, item_id: str, action: DecisionAction, seen: int | None, final: bool = False
    ) -> None:
        """Record the reviewer's decision with the card's note (and reason, on a reject)."""
        store = _shared.get_store()
        note = str(st.session_state.get(self.note_key(item_id), "")).strip()
        reason = None
        if action is DecisionAction.REJECT:
            reason = st.session_state.get(self.reason_key(item_id))
        try:
            store.record_decision(item_id, action, _shared.reviewer(), note=note,
                                  reason=reason or "", seen=seen, final=final,
                                  kind=self.kind)  # fmt: skip
        except StaleDecisionError as err:
            # Another tab of this reviewer decided it: the next one, with why.
            st.session_state[self.current_key] = None
            st.session_state[self.flash_key] = ("warning", str(err))
            return
        except CodesearchError as err:
            # Nothing was written: the card stays, with the reason.
            st.session_state[self.flash_key] = ("error", f"Not done: {err}")
            return
        st.session_state.pop(self.pinned_key, None)
        st.session_state[self.current_key] = None
        said = (f" ({reason})" if reason else "") + (f" with the note “{note}”" if note else "")
        final_word = "Final: " if final else ""
        st.session_state[self.flash_key] = (
            "success",
            f"{final_word}{self.words[action]} {self.noun} `{self.short(item_id)}`{said}.",
        )

    def undo(self) -> None:
        """Undo the reviewer's own last decision in this queue: that item is back on the card."""
        try:
            item_id, _ = _shared.get_store().undo_last(_shared.reviewer(), kind=self.kind)
        except CodesearchError as err:
            st.session_state[self.flash_key] = ("error", f"Not done: {err}")
            return
        st.session_state[self.current_key] = st.session_state[self.pinned_key] = item_id
        st.session_state[self.flash_key] = (
            "success",
            f"Undone: {self.noun} `{self.short(item_id)}` is back on the card.",
        )

    def open_conflict(self) -> None:
        """A lead's button: the first item in conflict on the card, to settle."""
        in_conflict = _shared.get_store().first_in_state("conflict", kind=self.kind)
        if in_conflict:
            st.session_state[self.current_key] = st.session_state[self.pinned_key] = in_conflict
