"""The review card's diff view: a proposed call beside the reference, their changed fields, and
the findings marked hit / partial / miss / extra in the corpus files. The Review page draws its
card with it, and the Evaluations page opens any eval answer in it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from itertools import groupby
from typing import Any

import streamlit as st

from codesearch_core.errors import CodesearchError
from codesearch_core.models import Blueprint
from codesearch_core.studio import (
    Change,
    EpisodeCall,
    FindingRow,
    FindingStatus,
    call_diff,
    hit_windows,
    render_lines_html,
)
from pages import _shared

MAX_FINDING_ROWS = 40


def call_json(call: Mapping[str, Any]) -> str:
    return json.dumps(call, indent=2, ensure_ascii=False)


def episode(calls_made: Sequence[EpisodeCall], error: str) -> None:
    """An agent's episode, turn by turn: each call and what the environment answered; the
    submitted locations are diffed below like a call's findings."""
    for turn, group in groupby(calls_made, key=lambda c: c.turn):
        st.markdown(f"**Turn {turn}**")
        for c in group:
            st.code(f"{c.name}({json.dumps(c.arguments, ensure_ascii=False)})", language="text",
                    wrap_lines=True)  # fmt: skip
            if c.error:
                st.caption(f":red[{c.observation}]")
            else:
                st.code(c.observation or "(empty)", language="text", wrap_lines=True)
    if error:
        st.error(f"**No locations submitted**: {error}")


def calls(
    bp: Blueprint,
    proposed: Mapping[str, Any] | None,
    raw_text: str,
    error: str,
    repairs: Sequence[str] = (),
) -> None:
    """The two calls side by side, then what differs (or why there is no call)."""
    ref_call = bp.reference_call.to_dict()
    c_prop, c_ref = st.columns(2)
    with c_prop:
        st.markdown("**Proposed call**")
        if proposed is not None:
            st.code(call_json(proposed), language="json")
        else:
            st.code(raw_text or "(empty output)", language="text", wrap_lines=True)
    with c_ref:
        if bp.plan is not None:
            # The diff below compares with the plan's last step: the step whose findings count.
            st.markdown(f"**Reference plan** ({len(bp.plan.steps)} steps; compared: the last)")
            st.code(call_json(bp.reference_dict()), language="json")
        else:
            st.markdown("**Reference call**")
            st.code(call_json(ref_call), language="json")
    changed = [r for r in call_diff(ref_call, proposed) if r.change is not Change.SAME]
    if proposed is None:
        st.error(f"**Invalid**: {error or 'the output is not a tool call'}")
    elif not changed:
        st.success("Same call as the reference.", icon=":material/check_circle:")
    else:
        colour = {Change.CHANGED: "orange", Change.ADDED: "blue", Change.REMOVED: "red"}
        st.markdown(
            "  \n".join(
                f":{colour[r.change]}-badge[{r.change.value}] `{r.field}`: "
                f"{r.reference or '∅'} → {r.proposed or '∅'}"
                for r in changed
            )
        )
    if repairs:
        st.caption("Repairs: " + "; ".join(repairs))


def findings(corpus: str, rows: Sequence[FindingRow]) -> None:
    """The counts, then one block per file with every hit, miss and extra of it marked."""
    counts = {s: sum(r.status is s for r in rows) for s in FindingStatus}
    partial = sum(bool(r.coverage and r.coverage.partial) for r in rows)
    st.markdown(
        # Partial hits are among the hits, said inside their badge: "4 hit 4 partial" read as 8.
        f"**Findings** · :green-badge[{counts[FindingStatus.HIT]} hit"
        + (f"] :violet-badge[{partial} of them partial] " if partial else "] ")
        + f":red-badge[{counts[FindingStatus.MISS]} miss] "
        f":orange-badge[{counts[FindingStatus.EXTRA]} extra]"
    )
    shown = rows[:MAX_FINDING_ROWS]
    # One block per file: overlapping windows of neighbouring findings would repeat lines.
    for path, in_file in groupby(shown, key=lambda r: r.path):
        file_rows = list(in_file)
        title = f"{path} · " + ", ".join(f"{r.status.value} {r.lines_label}" for r in file_rows)
        try:
            lines = _shared.lines_of(corpus, path)
        except CodesearchError as err:
            st.caption(f"{title}: {err}")
            continue
        marks = [m for r in file_rows for m in r.marks]
        for i, (first, last) in enumerate(hit_windows(len(lines), marks, context=2)):
            st.html(render_lines_html(lines[first - 1 : last], first_line=first, marks=marks,
                                      title=title if i == 0 else ""))  # fmt: skip
    if len(rows) > MAX_FINDING_ROWS:
        st.caption(f"…and {len(rows) - MAX_FINDING_ROWS} more rows.")
