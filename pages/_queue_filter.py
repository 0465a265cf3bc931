"""The filter of a Review queue other than Proposals (whose filters are its own panel), typed as
`KEY=VALUE` words: the kind's own keys, the words `codesearch review accept|reject --queue KIND
--filter` takes (e.g. `max_reward=0.99 tool_used=read_file`, `state=accept`). The card's next item
follows it, and so does the lead's bulk panel (`pages/_bulk.py`). It lives in the address
(`&filter=...`), so a reload, a link or a bookmark keeps it.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Final

import streamlit as st

from codesearch_core.errors import CodesearchError
from codesearch_core.store import DecisionState, ItemFilters, kind_of
from pages import _history

#: The address parameter of the typed filter.
FILTER_PARAM: Final = "filter"


@dataclass(frozen=True)
class Typed:
    """What the box holds: the filters (None: none typed, every open item), and whether the words
    parsed (a wrong key or value is said under the box; nothing then acts on the queue in bulk)."""

    filters: ItemFilters | None
    ok: bool = True


def box(kind: str) -> Typed:
    """The queue's filter box. A wrong key or value says which keys and values there are."""
    key = f"{kind}:filter"
    _history.follow_address(FILTER_PARAM, key)  # a reload, a link, Back: the address's filter
    queue_kind = kind_of(kind)
    # A text input commits on Enter and when it loses focus: typed and clicked away, it applies.
    typed = st.text_input(
        "Filter", key=key, placeholder="KEY=VALUE ... · e.g. state=any text=word (none: to do)",
        help=f"Keys: {', '.join(queue_kind.filter_keys())} (state is decision: "
        f"{', '.join(DecisionState)}). The same words as `codesearch review accept --queue {kind} "
        "--filter KEY=VALUE`.",
    )  # fmt: skip
    _history.write_address(FILTER_PARAM, typed.strip() or None)
    if not typed.strip():
        return Typed(None)
    try:
        return Typed(queue_kind.parse_filters(shlex.split(typed)))
    except (CodesearchError, ValueError) as err:
        st.error(f"Not a filter: {err}. The queue shows every item to do until it is fixed.",
                 icon=":material/error:")  # fmt: skip
        return Typed(None, ok=False)


def conflicts(kind: str) -> ItemFilters:
    """The filters of the Conflicts entry's card: the kind's items in conflict."""
    return kind_of(kind).filters(decision=DecisionState.CONFLICT)
