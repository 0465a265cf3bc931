"""The Review page's queue picker: one button per queue kind of the store's registry
(`store.KINDS`, each named by its `title`), each with its open items, and the page module that
draws each kind's queue (`PAGES`). The Proposals queue is the page's own (`pages/review.py`): the
picker returns False for it. A new kind of queue is one store module with its entry in `KINDS`,
and one page module with its entry in `PAGES`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

import streamlit as st

from codesearch_core import studio
from codesearch_core.store import DRAFT, DRIFT, EPISODE, KINDS, PROPOSAL, QA, Store
from pages import _drafts_queue, _drift_queue, _episodes_queue, _qa_queue, _queue_frame

#: The picker's widget key (its value: the queue's display name).
QUEUE: Final = "review:queue"

#: Each kind's queue, drawn from its open counts (`Queue.counts()`, read once a run here).
PAGES: Final[Mapping[str, Callable[[Store, Mapping[str, int]], None]]] = {
    DRAFT: _drafts_queue.draw, DRIFT: _drift_queue.draw, EPISODE: _episodes_queue.draw,
    QA: _qa_queue.draw,
}  # fmt: skip


def show(store: Store) -> bool:
    """Draw the queue picker; with a queue other than Proposals picked, draw it and return True
    (the page then stops: the proposals' card is not drawn)."""
    names = {kind: studio.QUEUE_NAMES[kind] for kind in KINDS}
    by_param = {name.lower(): name for name in names.values()}
    wanted = by_param.get(st.query_params.get(_queue_frame.QUEUE_PARAM, ""))
    if wanted and QUEUE not in st.session_state:
        st.session_state[QUEUE] = wanted
    counts = {kind: store.queue(kind).counts() for kind in PAGES}
    open_by_name = {names[kind]: c["open"] for kind, c in counts.items()}
    choice = st.segmented_control(
        "Queue", list(names.values()), default=names[PROPOSAL], key=QUEUE, required=True,
        format_func=lambda q: f"{q} ({open_by_name[q]})" if q in open_by_name else q,
    )  # fmt: skip
    _queue_frame.address_queue(str(choice).lower())
    kind = next((k for k, name in names.items() if name == choice), PROPOSAL)
    if kind not in PAGES:
        return False
    PAGES[kind](store, counts[kind])
    return True
