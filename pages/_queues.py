"""The Review page's queue picker: one button per queue kind of the store's registry
(`store.KINDS`, each named by its `title`), each with its open items, and the page module that
draws each kind's queue (`PAGES`); and **Conflicts**, a lead's queue of every item reviewers
disagree on, of every kind that takes several reviews (Proposals, Episodes, QA), one card at a
time with A / X as the lead's final accept / reject. The Proposals queue is the page's own
(`pages/review.py`): the picker says so (`Picked`) and the page draws it, under its filters or,
from Conflicts, over its conflicts. A new kind of queue is one store module with its entry in
`KINDS`, and one page module with its entry in `PAGES`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from functools import partial
from typing import Final

import streamlit as st

from codesearch_core import studio
from codesearch_core.store import DRAFT, DRIFT, EPISODE, KINDS, PROPOSAL, QA, Store
from pages import _drafts_queue, _drift_queue, _episodes_queue, _qa_queue, _queue_frame

#: The picker's widget key (its value: the queue's display name).
QUEUE: Final = "review:queue"
#: The picker's entry for the conflicts of every queue.
CONFLICTS: Final = "Conflicts"

#: Each kind's queue, drawn from its open counts (`Queue.counts()`, read once a run here).
PAGES: Final[Mapping[str, Callable[[Store, Mapping[str, int]], None]]] = {
    DRAFT: _drafts_queue.draw, DRIFT: _drift_queue.draw, EPISODE: _episodes_queue.draw,
    QA: _qa_queue.draw,
}  # fmt: skip
#: The queues whose items can be in conflict (several reviews an item) other than Proposals:
#: their card over their conflicts.
SETTLE: Final[Mapping[str, Callable[[Store, Mapping[str, int]], None]]] = {
    EPISODE: partial(_episodes_queue.draw, settling=True),
    QA: partial(_qa_queue.draw, settling=True),
}


class Picked(enum.Enum):
    """What the page draws after the picker: the proposals' queue under its filters, the
    proposals' conflicts, or nothing more (the picker drew another queue)."""

    PROPOSALS = "proposals"
    PROPOSAL_CONFLICTS = "proposal conflicts"
    DRAWN = "drawn"


def show(store: Store) -> Picked:
    """Draw the queue picker and, for a queue other than Proposals, that queue."""
    names = {kind: studio.QUEUE_NAMES[kind] for kind in KINDS}
    choices = [names[PROPOSAL], CONFLICTS, *(names[k] for k in KINDS if k != PROPOSAL)]
    by_param = {name.lower(): name for name in choices}
    wanted = by_param.get(st.query_params.get(_queue_frame.QUEUE_PARAM, ""))
    if wanted and QUEUE not in st.session_state:
        st.session_state[QUEUE] = wanted
    counts = {kind: store.queue(kind).counts() for kind in (PROPOSAL, *PAGES)}
    in_conflict = {k: counts[k]["conflict"] for k in (PROPOSAL, *SETTLE) if counts[k]["conflict"]}
    label = {names[kind]: f"{names[kind]} ({c['open']})" for kind, c in counts.items()}
    label[CONFLICTS] = f"{CONFLICTS} ({sum(in_conflict.values())})"
    choice = st.segmented_control(
        "Queue", choices, default=names[PROPOSAL], key=QUEUE, required=True,
        format_func=lambda q: label.get(q, q),
    )  # fmt: skip
    # Never none: a run that lost the widget's state (a rerun racing the first) shows Proposals
    # and says so in the address, not "queue=none".
    choice = choice or names[PROPOSAL]
    _queue_frame.address_queue(str(choice).lower())
    if choice == CONFLICTS:
        return _conflicts(store, counts, in_conflict, names)
    kind = next((k for k, name in names.items() if name == choice), PROPOSAL)
    if kind not in PAGES:
        return Picked.PROPOSALS
    PAGES[kind](store, counts[kind])
    return Picked.DRAWN


def _conflicts(
    store: Store,
    counts: Mapping[str, Mapping[str, int]],
    in_conflict: Mapping[str, int],
    names: Mapping[str, str],
) -> Picked:
    """The Conflicts entry: the first queue that has items in conflict, its card over them."""
    each = " · ".join(f"{names[k]} {n}" for k, n in in_conflict.items())
    st.caption("Items reviewers disagree on, of every queue: a lead's final decision settles "
               "each (A final accept, X final reject)."
               + (f" In conflict: {each}." if each else ""))  # fmt: skip
    if not in_conflict:
        st.success("No item is in conflict.", icon=":material/done_all:")
        return Picked.DRAWN
    kind = next(iter(in_conflict))
    if kind == PROPOSAL:
        return Picked.PROPOSAL_CONFLICTS
    SETTLE[kind](store, counts[kind])
    return Picked.DRAWN
