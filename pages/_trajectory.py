"""The trajectory view: one gym episode turn by turn (each call, its arguments, what the environment
answered, a search's shown findings and a read's range against the expected spans), then the
submitted locations diffed and the reward with its components. The Evaluations page draws an agent
run's answers with it, the Episodes review card a stored episode; `show` is the one entry.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from codesearch_core import studio
from codesearch_core.models import Blueprint
from codesearch_core.store import StoredEpisode
from pages import _answer_view, _history, _shared


def show(
    episode: studio.Trajectory | StoredEpisode,
    *,
    blueprint: Blueprint | None = None,
    key: str = "traj",
    page_param: str | None = None,
    intent: bool = True,
    marks: Mapping[tuple[int, int], str] | None = None,
    current: tuple[int, int] | None = None,
) -> None:
    """Draw one episode. `episode` is a built view (`studio.answer_trajectory`,
    `studio.episode_trajectory`) or a stored episode, diffed against `blueprint` (by default the
    store's blueprint of that id). `key` names this view's widgets (two views on one page need two
    keys); `page_param`, when given, is the address parameter that holds the page of turns shown,
    so a link and Back reopen it. `intent=False`: the caller shows the intent already (a card's
    heading). `marks`: a line to show above calls, keyed by (turn, call), both from 1 (the step
    labels); `current`: the call the step keys act on, marked."""
    view = episode
    if isinstance(view, StoredEpisode):
        bp = blueprint or _shared.get_store().blueprints.get(view.blueprint_id)
        view = studio.episode_trajectory(view, bp)
    header(view, intent=intent)
    if view.problem:
        st.error(f"**This episode cannot be shown**: {view.problem}", icon=":material/error:")
        return
    page = page_number(len(view.turns), key=key, identity=f"{view.title}|{view.blueprint_id}",
                       page_param=page_param)  # fmt: skip
    for turn in view.page(page):
        st.markdown(f"**Turn {turn.number}**")
        calls(view, turn, marks=marks, current=current)
    submitted(view)
    reward(view)


def header(view: studio.Trajectory, *, intent: bool) -> None:
    """The episode's line: engine, blueprint, corpus, reward, turns, calls, how it ended."""
    invalid = f" ({view.invalid_calls} refused or failed)" if view.invalid_calls else ""
    st.caption(
        " · ".join(
            part
            for part in (
                view.title,
                f"`{view.blueprint_id}`",
                f"corpus **{view.corpus}**",
                f"reward **{view.reward:.3f}**",
                studio.plural(len(view.turns), "turn"),
                studio.plural(view.calls, "call") + invalid,
                f"ended: {view.end_reason}" if view.end_reason else "",
            )
            if part
        )
    )
    if view.corpus_problem:
        st.warning(f"**The corpus cannot be read**: {view.corpus_problem}. The calls and what the "
                   "environment answered are shown; the code around the findings is not.",
                   icon=":material/folder_off:")  # fmt: skip
    if view.blueprint is None:
        st.warning(f"Blueprint `{view.blueprint_id}` is not in the store: the calls can be read, "
                   "not diffed against its expected spans.")  # fmt: skip
    elif intent:
        st.markdown(f"**{view.blueprint.intent}**")


def page_number(turns: int, *, key: str, identity: str, page_param: str | None) -> int:
    """The page of `turns` turns shown (1-based), with its picker when there is more than one;
    `identity` names the episode (or pair) on view: another one opens on its first page, unless
    its address names another."""
    per = studio.TURNS_PER_PAGE
    count = max(1, -(-turns // per))
    if count == 1:
        if page_param:
            _history.write_address(page_param, None)
        return 1
    pages = [str(n) for n in range(1, count + 1)]
    widget = f"{key}:page"
    if st.session_state.get(f"{key}:episode") != identity:
        st.session_state[f"{key}:episode"] = identity
        st.session_state.pop(widget, None)
    if page_param:
        _history.follow_address(page_param, widget, pages)
    if st.session_state.get(widget) not in pages:
        st.session_state[widget] = pages[0]
    page = st.segmented_control(
        f"{studio.plural(turns, 'turn')}, {per} a page",
        pages,
        key=widget,
        format_func=lambda p: f"{(int(p) - 1) * per + 1} to {min(int(p) * per, turns)}",
    )
    page = page or pages[0]
    if page_param:
        # The first page too: Back returns to it only if the address held it (adding a parameter
        # to the address is not a history entry, `pages/_history.py`; changing one is).
        _history.write_address(page_param, page)
    return int(page)


def calls(
    view: studio.Trajectory,
    turn: studio.TurnView,
    *,
    marks: Mapping[tuple[int, int], str] | None = None,
    current: tuple[int, int] | None = None,
) -> None:
    """One turn's calls, each with what the environment answered (and `show`'s marks)."""
    if not turn.calls:
        st.caption("No call: the agent answered in words, so the episode ended.")
    for index, call in enumerate(turn.calls, start=1):
        key = (turn.number, index)
        if key == current:
            st.markdown(":blue-badge[:material/arrow_right: current step] "
                        + (marks or {}).get(key, ""))  # fmt: skip
        elif marks and key in marks:
            st.caption(marks[key])
        _call(view, call)


def _call(view: studio.Trajectory, call: studio.CallView) -> None:
    st.code(f"{call.name}({call.arguments})", language="text", wrap_lines=True)
    if call.error:
        st.markdown(f":red-badge[{call.error}] {_escaped(call.observation)}")
    elif call.kind == "search" and view.blueprint is not None:
        shown = call.shown_matches
        seen = (studio.plural(call.matches, "match", "matches") + f", {shown} shown"
                if call.matches > shown else studio.plural(shown, "match", "matches"))  # fmt: skip
        with st.expander(f"{seen} · {call.count(studio.FindingStatus.HIT)} of "
                         f"{view.expected} expected found"):  # fmt: skip
            st.markdown(_answer_view.finding_badges(call.rows) + " (of the matches shown)")
            _code_or_list(view, call.rows)
            st.code(call.observation or "(empty)", language="text", wrap_lines=True)
    elif call.read is not None:
        covers = ", ".join(f"L{s.start_line}-{s.end_line}" for s in call.read.covers)
        with st.expander(f"read {call.read.label}"
                         + (f" · shows expected {covers}" if covers else " · no expected line")):  # fmt: skip
            st.code(call.observation or "(empty)", language="text", wrap_lines=True)
    else:
        st.caption(_escaped(call.observation) or "(empty)")
    if call.observation_cut:
        st.caption(f"The observation is cut here: the first {len(call.observation):,} of its "
                   f"{call.observation_chars:,} characters are shown.")  # fmt: skip


def _code_or_list(view: studio.Trajectory, rows: tuple[studio.FindingRow, ...]) -> None:
    if view.corpus_problem:
        st.markdown("  \n".join(f"{r.status.value} `{r.path}` {r.lines_label}" for r in rows))
    else:
        _answer_view.finding_code(view.corpus, rows)


def submitted(view: studio.Trajectory) -> None:
    """The submitted locations against the expected spans."""
    if view.submitted is None:
        st.error(f"**No locations submitted** ({view.end_reason or 'no submit'}): the reward is 0.",
                 icon=":material/error:")  # fmt: skip
        return
    st.markdown(f"**Submitted locations** · {_answer_view.finding_badges(view.submitted)}")
    _code_or_list(view, view.submitted)


def reward(view: studio.Trajectory) -> None:
    """The reward and its components, each with its weight: the weighted parts add up to it."""
    st.markdown(f"**Reward {view.reward:.3f}**")
    st.dataframe(
        view.reward_parts,
        hide_index=True,
        width="stretch",
        column_config={
            name: st.column_config.NumberColumn(format="%.3f")
            for name in ("value", "weight", "weighted")
        },
    )
    st.caption(view.reward_sum)


def _escaped(text: str) -> str:
    # An observation is the tool's text: its `*`, `_` and `[` are not Markdown.
    return text.replace("\\", "\\\\").replace("*", "\\*").replace("_", "\\_").replace("[", "\\[")
