"""Two episodes of one task side by side (issue 39): turn against turn in two aligned columns, then
each one's submitted locations and reward, so a reader sees where two engines, two runs or two of
the K rollouts searched differently and which one found more. The Evaluations page draws two runs'
best episodes with it, the Episodes card the episode under review against another of its task.
The pieces are the trajectory view's (`pages/_trajectory.py`), so a call reads the same in both.
"""

from __future__ import annotations

import streamlit as st

from codesearch_core import studio
from pages import _trajectory


def show(
    left: studio.Trajectory,
    right: studio.Trajectory,
    *,
    key: str,
    page_param: str | None = None,
) -> None:
    """Draw `left` and `right` (two trajectories of one blueprint) in aligned columns. `key` names
    the view's widgets; `page_param` is the address parameter of the page of turns shown."""
    heads = st.columns(2)
    for column, view in zip(heads, (left, right), strict=True):
        with column:
            _trajectory.header(view, intent=False)
    bp = left.blueprint or right.blueprint
    if bp is not None:
        st.markdown(f"**{bp.intent}**")
    problems = [v.problem for v in (left, right) if v.problem]
    if problems:
        st.error("**These episodes cannot be compared**: " + "; ".join(problems),
                 icon=":material/error:")  # fmt: skip
        return
    pairs = studio.paired_turns(left, right)
    page = _trajectory.page_number(
        len(pairs), key=key, identity=f"{left.title}|{right.title}|{left.blueprint_id}",
        page_param=page_param,
    )  # fmt: skip
    per = studio.TURNS_PER_PAGE
    for pair in pairs[(page - 1) * per : page * per]:
        st.markdown(f"**Turn {pair.number}**")
        columns = st.columns(2)
        for column, view, turn in zip(columns, (left, right), (pair.left, pair.right), strict=True):
            with column:
                if turn is None:
                    st.caption("No turn: this episode had ended.")
                else:
                    _trajectory.calls(view, turn)
    ends = st.columns(2)
    for column, view in zip(ends, (left, right), strict=True):
        with column:
            _trajectory.submitted(view)
            _trajectory.reward(view)
