"""The review flow every queue of the Review page shares: the callbacks that decide, undo, step
and open a conflict, the last action's message, and (`ItemQueue`) which item the card shows, for
the queues whose items are reviewed as they are (Episodes, QA). Each queue describes itself once
(`Flow`, or `ItemQueue` for those that lease their items through it); what is really its own is a
hook (`said`: how its messages word a decision; `undone`: an undo), and the card it draws inside the
shared frame (`pages/_queue_frame.py`) is its own.

The item on the card is in the address (`?item=ID`), so a reload, a link or Back resumes it; an
item the reviewer stepped back to (Previous), or that Undo or a lead's conflict button brought, is
*pinned*: shown as it is, decided or not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Generic, TypeVar

import streamlit as st

from codesearch_core import studio
from codesearch_core.access import Action
from codesearch_core.errors import CodesearchError
from codesearch_core.models import DecisionAction
from codesearch_core.store import DecisionState, ItemFilters, StaleDecisionError, Store
from pages import _bulk, _identity, _queue_filter, _queue_frame, _shared

C = TypeVar("C", bound=studio.QueueCard)


@dataclass(frozen=True, kw_only=True)
class Flow:
    """One queue's review flow: its kind of item, its session-state and widget key prefixes, the
    word for its items in messages, and the hooks where a queue words its messages its own way."""

    kind: str
    state: str  # session-state keys: "{state}:current", ...
    widgets: str  # widget keys: "{widgets}:note:{id}", "{widgets}:reason:{id}" ("": "note:{id}")
    noun: str  # "episode", "item": what the messages call one
    #: The message's first word for each decision (unless `said` words the whole message).
    words: Mapping[DecisionAction, str] = field(default_factory=dict)
    #: How a message names an item (a 64-character episode id: its first 10).
    short: Callable[[str], str] = str
    #: The message after a recorded decision (store, item id, action, final), where the queue
    #: says it its own way: Drift names the resolution the decision made, read back from the store.
    said: Callable[[Store, str, DecisionAction, bool], str] | None = None
    #: The message after an undo put an item back (its id), where the queue says it its own way.
    undone: Callable[[str], str] | None = None
    #: How the messages of decisions and undos show (`_queue_frame.flash`): Proposals toasts them.
    shown_as: str = "success"
    #: The item a decision brings to the card (store, the decided item's id), where the queue
    #: picks it itself (Proposals: the next its filters select); None: the next one to do.
    next_after: Callable[[Store, str], str | None] | None = None

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
        return f"{self.widgets}:note:{item_id}" if self.widgets else f"note:{item_id}"

    def reason_key(self, item_id: str) -> str:
        return f"{self.widgets}:reason:{item_id}" if self.widgets else f"reason:{item_id}"

    def flash(self) -> tuple[str, str] | None:
        """The last action's message, once; returns it (kind, text), or None."""
        said: tuple[str, str] | None = st.session_state.pop(self.flash_key, None)
        if said:
            _queue_frame.flash(*said)
        return said

    def action_row(
        self,
        item_id: str,
        seen: int | None,
        *,
        can_undo: bool,
        undo_help: str,
        refused: str | None = None,
        can_decide: bool = True,
        blocked: str | None = None,
        in_conflict: bool = False,
        accept: tuple[str, str, str | None] = ("Accept", "", None),
        reject: tuple[str, str, str | None] = ("Reject", "", None),
    ) -> None:
        """The card's A / X / S / U row, the note and the reject's reason picker (the kind's
        `studio.reject_reasons`) wired to this flow. `seen`: the reviewer's vote's event id (a
        stale tab's decision is refused); `refused`: why the reviewer may not decide (greys A, X,
        S); `blocked`: why the item cannot be accepted (greys A, said under the row); `accept` /
        `reject`: (label, key word, help), as the queue names them (QA: Correct / Incorrect). An
        item `in_conflict`: A and X are a lead's final decisions."""
        pre = f"{self.widgets}:" if self.widgets else ""
        off = bool(refused) or not can_decide
        (yes, yes_word, yes_help), (no, no_word, no_help) = accept, reject
        _queue_frame.action_row(
            [
                _queue_frame.Choice(
                    yes, ":material/check:", f"{pre}accept", word=yes_word, shortcut="A",
                    primary=True, disabled=off or blocked is not None,
                    help=blocked or refused or yes_help, on_click=self.decide,
                    args=(item_id, DecisionAction.ACCEPT, seen), width=1.5,
                ),
                _queue_frame.Choice(
                    no, ":material/close:", f"{pre}reject", word=no_word, shortcut="X",
                    disabled=off, help=refused or no_help, on_click=self.decide,
                    args=(item_id, DecisionAction.REJECT, seen),
                    width=1.6 if len(no) > len("Reject") else 1.5,  # "Incorrect" whole
                ),
                _queue_frame.Choice(
                    "Skip", ":material/skip_next:", f"{pre}skip", shortcut="S", disabled=off,
                    help=refused, on_click=self.decide,
                    args=(item_id, DecisionAction.SKIP, seen), width=1.3,
                ),
                _queue_frame.Choice(
                    "Undo", ":material/undo:", f"{pre}undo", shortcut="U", disabled=not can_undo,
                    on_click=self.undo, help=undo_help, width=1.3,
                ),
            ],
            note_key=self.note_key(item_id),
            note_placeholder="note · Enter, then A / X / S",
            reasons=_queue_frame.Reasons(studio.reject_reasons(self.kind),
                                         self.reason_key(item_id),
                                         f"why {no_word}" if no_word else "reject reason"),
            # Said in view, next to the greyed button: A on a greyed Accept does nothing, and a
            # reviewer pressing it saw no reason at all (issue 29).
            blocked=f":red[**Cannot be accepted.** {blocked}]" if blocked and can_decide else None,
            conflict=_queue_frame.Conflict(self.noun, item_id, pre, self.decide, blocked,
                                           can_decide)
            if in_conflict else None,
        )  # fmt: skip

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
            store.queue(self.kind).decide(item_id, action, _shared.reviewer(), note=note,
                                  reason=reason or "", seen=seen, final=final)  # fmt: skip
        except StaleDecisionError as err:
            # Another tab of this reviewer decided it: the next one, with why.
            st.session_state[self.current_key] = self._next(store, item_id)
            st.session_state[self.flash_key] = ("warning", str(err))
            return
        except CodesearchError as err:
            # Nothing was written: the card stays, with the reason.
            st.session_state[self.flash_key] = ("error", f"Not done: {err}")
            return
        st.session_state.pop(self.pinned_key, None)
        st.session_state[self.current_key] = self._next(store, item_id)
        if self.said is not None:
            text = self.said(store, item_id, action, final)
        else:
            said = (f" ({reason})" if reason else "") + (f" with the note “{note}”" if note else "")
            final_word = "Final: " if final else ""
            text = f"{final_word}{self.words[action]} {self.noun} `{self.short(item_id)}`{said}."
        st.session_state[self.flash_key] = (self.shown_as, text)

    def _next(self, store: Store, item_id: str) -> str | None:
        return self.next_after(store, item_id) if self.next_after is not None else None

    def undo(self) -> None:
        """Undo the reviewer's own last decision in this queue: that item is back on the card."""
        try:
            item_id, _ = _shared.get_store().queue(self.kind).undo(_shared.reviewer())
        except CodesearchError as err:
            st.session_state[self.flash_key] = ("error", f"Not done: {err}")
            return
        st.session_state[self.current_key] = st.session_state[self.pinned_key] = item_id
        text = f"Undone: {self.noun} `{self.short(item_id)}` is back on the card."
        st.session_state[self.flash_key] = (
            self.shown_as,
            self.undone(item_id) if self.undone else text,
        )

    def open_conflict(self) -> None:
        """A lead's button: the first item in conflict on the card, to settle."""
        in_conflict = _shared.get_store().queue(self.kind).first_in_state("conflict")
        if in_conflict:
            st.session_state[self.current_key] = st.session_state[self.pinned_key] = in_conflict


@dataclass(frozen=True, kw_only=True)
class ItemQueue(Flow, Generic[C]):
    """A queue whose card the flow picks: how the studio loads a card, names it, and says which
    one is next to do for a reviewer (leased to them)."""

    load: Callable[[Store, str], C | None]
    id_of: Callable[[C], str]
    #: Said after "No {noun} `ID` in this store" when an address names an item that is not there.
    missing_hint: str = ""

    @property
    def filters_key(self) -> str:
        """The session key of the filters the card follows (`draw`'s; None: the to-do)."""
        return f"{self.state}:filters"

    def _filters(self) -> ItemFilters | None:
        filters: ItemFilters | None = st.session_state.get(self.filters_key)
        return filters

    def _next(self, store: Store, item_id: str) -> str | None:
        # After a decision: under a browsed state (the conflicts a lead settles) the next match
        # after the decided item; the next to do is leased when the card is drawn.
        filters = self._filters()
        return store.queue(self.kind).browse(filters, item_id) if studio.browsed(filters) else None

    def place(self, store: Store, item_id: str, who: str, title: str) -> None:
        """The card's head: "{title} k of n · m left" among the reviewer's share (under a filter:
        among the filter's items, decided or not; conflicts among themselves), their progress,
        and Previous / Next over what they decided."""
        queue = store.queue(self.kind)
        done, share = queue.progress(who)
        seen = queue.seen(who)
        filters = self._filters()
        if filters is None:
            at = studio.queue_place(seen, item_id, done)
            _queue_frame.position(f"{title} {min(at, share)} of {share}", f"{share - done} left")
        else:
            # The place does not shift as items are decided: among the filter's items in any
            # state, unless the filter is a state a lead browses ("Conflict 2 of 3").
            state = DecisionState(filters.decision)
            browsing = studio.browsed(filters)
            among = filters if browsing else replace(filters, decision=DecisionState.ANY)
            placed, total = queue.place(among, item_id)
            noun = "Conflict" if state is DecisionState.CONFLICT else title
            where = f"{noun} {placed} of {total}" if placed else f"{noun} (outside the filter)"
            left = total if browsing else queue.place(replace(filters, reviewer=who), item_id)[1]
            _queue_frame.position(
                where, f"{left} {studio.state_words(state) if browsing else 'left'}"
            )
        if not studio.browsed(filters):  # the reviewer's own to-do; a lead browsing has none
            _queue_frame.progress(done, share)
        _queue_frame.step_row(seen, item_id, key=self.state, on_step=self.step)

    def current(self, store: Store, who: str) -> C | None:
        """The item for the card: the one the address names (a reload, a link, Back), the one on
        the card while it is still to do, else the next one leased to the reviewer."""
        addressed = st.query_params.get(studio.ITEM_PARAM)
        if addressed and addressed != st.session_state.get(f"{self.state}:addressed"):
            st.session_state[self.current_key] = st.session_state[self.pinned_key] = addressed
        filters = self._filters()
        # A browsed item (a conflict a lead settles) is nobody's to-do: it stays on the card as
        # it is until the lead decides it or steps on.
        browsing = studio.browsed(filters)
        item_id = st.session_state.get(self.current_key)
        card = self.load(store, item_id) if item_id else None
        if item_id and card is None and item_id == addressed:
            st.warning(f"No {self.noun} `{item_id}` in this store{self.missing_hint}: the next "
                       "one to do instead.", icon=":material/search_off:")  # fmt: skip
        pinned = card is not None and self.id_of(card) == st.session_state.get(self.pinned_key)
        if card is not None and not browsing and studio.still_to_do(card, who):
            store.queue(self.kind).take_lease(self.id_of(card), who)  # a reload or a link
        elif card is not None and not pinned and not browsing:
            card = None  # decided meanwhile (another tab, another reviewer): not to do any more
        if card is None:
            st.session_state.pop(self.pinned_key, None)
            item_id = studio.next_item_of(store, self.kind, who, filters)
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
        settling: bool = False,
    ) -> None:
        """Under the queue's caption: its filter box and a lead's bulk actions over it, a lead's
        button to the next item in conflict, the last action's message, then the card `card`
        draws, or, with nothing left to do, `empty` (what makes more) with Undo. `settling`: the
        Conflicts entry's card instead, over the items in conflict (no box, no bulk)."""
        filters: ItemFilters | None
        if settling:
            filters, conflicts = _queue_filter.conflicts(self.kind), 0
        else:
            typed = _queue_filter.box(self.kind)
            _bulk.filtered_bulk(store, self.kind, typed)
            filters = typed.filters
        if st.session_state.get(self.filters_key) != filters:
            # Another filter: the card starts again from its first item.
            for key in (self.current_key, self.pinned_key):
                st.session_state.pop(key, None)
        st.session_state[self.filters_key] = filters
        if conflicts:
            # Conflicts are never leased (nobody's to-do): a lead opens them here to settle them.
            not_lead = _shared.denial(Action.RESOLVE)
            st.button(f"Settle the next {self.noun} in conflict ({conflicts})",
                      icon=":material/gavel:", key=f"{self.widgets}:conflicts",
                      on_click=self.open_conflict, disabled=bool(not_lead),
                      help=not_lead)  # fmt: skip
        self.flash()
        who = _identity.ask_name(f"to review {plural}")
        if not who:
            return
        with _shared.shown_errors():
            shown = self.current(store, who)
            if shown is not None:
                card(store, shown, who)
                return
            _queue_frame.step_row(store.queue(self.kind).seen(who), None, key=self.state,
                                  on_step=self.step)  # fmt: skip
            st.info(empty if filters is None else f"No {plural} left under this filter.",
                    icon=":material/inbox:")  # fmt: skip
            if store.queue(self.kind).last_undoable(who):
                st.button("Undo last decision", icon=":material/undo:", shortcut="U",
                          on_click=self.undo, key=f"{self.widgets}:undo_empty")  # fmt: skip
