"""The review card's diff view: a proposed call beside the reference, their changed fields, and
the findings marked hit / partial / miss / extra in the corpus files. The Review page draws its
card with it, and the Evaluations page opens any single-call eval answer in it (an agent's episode
is `pages/_trajectory.py`, which draws its findings with the same functions; a QA item's expected
spans are `expected_code`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from itertools import groupby
from typing import Any

import streamlit as st

from codesearch_core.errors import CodesearchError
from codesearch_core.models import Blueprint, Span
from codesearch_core.studio import (
    Change,
    FindingRow,
    FindingStatus,
    Mark,
    Tone,
    call_diff,
    hit_windows,
    render_lines_html,
)
from pages import _shared

MAX_FINDING_ROWS = 40


def call_json(call: Mapping[str, Any]) -> str:
    return json.dumps(call, indent=2, ensure_ascii=False)


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


def finding_badges(rows: Sequence[FindingRow]) -> str:
    """The counts of a findings diff as coloured badges (Markdown)."""
    counts = {s: sum(r.status is s for r in rows) for s in FindingStatus}
    partial = sum(bool(r.coverage and r.coverage.partial) for r in rows)
    # Partial hits are among the hits, said inside their badge: "4 hit 4 partial" read as 8.
    return (
        f":green-badge[{counts[FindingStatus.HIT]} hit"
        + (f"] :violet-badge[{partial} of them partial] " if partial else "] ")
        + f":red-badge[{counts[FindingStatus.MISS]} miss] "
        f":orange-badge[{counts[FindingStatus.EXTRA]} extra]"
    )


def findings(corpus: str, rows: Sequence[FindingRow]) -> None:
    """The counts, then one block per file with every hit, miss and extra of it marked."""
    st.markdown(f"**Findings** · {finding_badges(rows)}")
    finding_code(corpus, rows)


def finding_code(corpus: str, rows: Sequence[FindingRow]) -> None:
    """One block per file of the corpus with every hit, miss and extra of it marked."""
    shown = rows[:MAX_FINDING_ROWS]
    # One block per file: overlapping windows of neighbouring findings would repeat lines.
    for path, in_file in groupby(shown, key=lambda r: r.path):
        file_rows = list(in_file)
        title = f"{path} · " + ", ".join(f"{r.status.value} {r.lines_label}" for r in file_rows)
        _file_block(corpus, path, title, [m for r in file_rows for m in r.marks])
    if len(rows) > MAX_FINDING_ROWS:
        st.caption(f"…and {len(rows) - MAX_FINDING_ROWS} more rows.")


def expected_code(corpus: str, spans: Sequence[Span]) -> None:
    """The spans an item expects, one block per file of the corpus with them marked (a QA item:
    no call was run, so nothing is a hit or a miss); where the corpus is not here, file:line."""
    st.markdown(f"**Expected findings** · {len(spans)} in {len({s.path for s in spans})} files")
    if not spans:
        st.caption("None: the call is expected to find nothing.")
    shown = sorted(spans)[:MAX_FINDING_ROWS]
    for path, in_file in groupby(shown, key=lambda s: s.path):
        file_spans = list(in_file)
        title = f"{path} · " + ", ".join(
            f"L{s.start_line}" + (f"-{s.end_line}" if s.end_line != s.start_line else "")
            for s in file_spans
        )
        _file_block(corpus, path, title,
                    [Mark(s.start_line, s.end_line, Tone.HIT) for s in file_spans])  # fmt: skip
    if len(spans) > MAX_FINDING_ROWS:
        st.caption(f"…and {len(spans) - MAX_FINDING_ROWS} more spans.")


def _file_block(corpus: str, path: str, title: str, marks: Sequence[Mark]) -> None:
    """A file's lines around its marks, in as few blocks as the windows allow."""
    try:
        lines = _shared.lines_of(corpus, path)
    except CodesearchError as err:
        st.caption(f"{title}: {err}")
        return
    for i, (first, last) in enumerate(hit_windows(len(lines), marks, context=2)):
        st.html(render_lines_html(lines[first - 1 : last], first_line=first, marks=marks,
                                  title=title if i == 0 else ""))  # fmt: skip
