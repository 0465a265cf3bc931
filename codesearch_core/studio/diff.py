"""What a reviewer compares: the proposed call against the reference call, field by field, and the
found findings against the expected spans, each labelled hit / miss / extra.

Pure functions over the domain types; the grader decides what matches (`grader.diff_findings`), this
module only lays the answer out in rows a person reads top to bottom.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from codesearch_core.grading import FindingsDiff, LineCoverage, line_coverage
from codesearch_core.models import Finding, Span, canonical_json
from codesearch_core.studio.code import Mark, Tone


class Change(StrEnum):
    SAME = "same"
    CHANGED = "changed"
    ADDED = "added"  # only in the proposed call
    REMOVED = "removed"  # only in the reference call


@dataclass(frozen=True, slots=True)
class CallDiffRow:
    """One leaf field of either call. Values are JSON text; "" where the call lacks the field."""

    field: str
    reference: str
    proposed: str
    change: Change


def _leaves(value: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    # Objects are walked into (a rule's `has.pattern` is a field of its own); lists are compared
    # whole, since `paths: [a, b]` vs `[b]` reads better as one changed value than as index noise.
    if isinstance(value, Mapping) and value:
        for key, inner in value.items():
            yield from _leaves(inner, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix, value


def call_diff(
    reference: Mapping[str, Any] | None, proposed: Mapping[str, Any] | None
) -> tuple[CallDiffRow, ...]:
    """Field-by-field comparison, reference order first, then fields only the proposal has.

    `proposed=None` (a proposal that did not parse) shows every reference field as removed.
    """
    ref = dict(_leaves(reference, "")) if reference else {}
    prop = dict(_leaves(proposed, "")) if proposed else {}
    rows: list[CallDiffRow] = []
    for name in [*ref, *(k for k in prop if k not in ref)]:
        in_ref, in_prop = name in ref, name in prop
        r = canonical_json(ref[name]) if in_ref else ""
        p = canonical_json(prop[name]) if in_prop else ""
        if in_ref and in_prop:
            change = Change.SAME if r == p else Change.CHANGED
        else:
            change = Change.REMOVED if in_ref else Change.ADDED
        rows.append(CallDiffRow(name, r, p, change))
    return tuple(rows)


class FindingStatus(StrEnum):
    HIT = "hit"
    MISS = "miss"
    EXTRA = "extra"


_TONE = {
    FindingStatus.HIT: Tone.HIT,
    FindingStatus.MISS: Tone.MISS,
    FindingStatus.EXTRA: Tone.EXTRA,
}


@dataclass(frozen=True, slots=True)
class FindingRow:
    """One line of the findings diff. `expected` is set for hits and misses, `found` for hits and
    extras; the lines shown are the found ones when there are any (that is what the call returned)."""

    status: FindingStatus
    expected: Span | None
    found: Finding | None

    @property
    def path(self) -> str:
        return self.found.path if self.found else self.expected.path if self.expected else ""

    @property
    def start_line(self) -> int:
        return (
            self.found.start_line
            if self.found
            else self.expected.start_line
            if self.expected
            else 0
        )

    @property
    def end_line(self) -> int:
        return self.found.end_line if self.found else self.expected.end_line if self.expected else 0

    @property
    def coverage(self) -> LineCoverage | None:
        """For a hit, the expected lines it covers and misses and the lines it spills (the grade
        credits a hit by their line IoU); None for a miss or an extra."""
        if self.found is None or self.expected is None:
            return None
        return line_coverage(self.found, self.expected)

    @property
    def lines_label(self) -> str:
        start, end = self.start_line, self.end_line
        label = _lines(start, end)
        exp, cover = self.expected, self.coverage
        if exp is not None and cover is not None and cover.partial:
            parts = [f"covers {cover.covered} of {cover.covered + cover.missed} lines"]
            if cover.spilled:
                parts.append(f"{cover.spilled} spilled")
            label += f" (expected {_lines(exp.start_line, exp.end_line)}: {', '.join(parts)})"
        return label

    @property
    def mark(self) -> Mark:
        """The lines to mark in the file; a found finding narrows the mark to its matched text."""
        tone = _TONE[self.status]
        if self.found is not None:
            f = self.found
            return Mark(f.start_line, f.end_line, tone, f.start_col, f.end_col)
        return Mark(self.start_line, self.end_line, tone)

    @property
    def marks(self) -> tuple[Mark, ...]:
        """`mark`, and for a partial hit the expected lines it missed, marked as missed."""
        exp, found = self.expected, self.found
        if exp is None or found is None:
            return (self.mark,)
        missed = [
            Mark(first, last, Tone.MISS)
            for first, last in (
                (exp.start_line, min(exp.end_line, found.start_line - 1)),
                (max(exp.start_line, found.end_line + 1), exp.end_line),
            )
            if first <= last
        ]
        return (self.mark, *missed)


def _lines(start: int, end: int) -> str:
    return f"L{start}" if start == end else f"L{start}-{end}"


def finding_rows(diff: FindingsDiff) -> tuple[FindingRow, ...]:
    """Hits, misses and extras in file and line order, so a file's rows sit together."""
    rows = [
        *(FindingRow(FindingStatus.HIT, span, found) for found, span in diff.hits),
        *(FindingRow(FindingStatus.MISS, span, None) for span in diff.misses),
        *(FindingRow(FindingStatus.EXTRA, None, found) for found in diff.extras),
    ]
    return tuple(sorted(rows, key=lambda r: (r.path, r.start_line, r.end_line, r.status.value)))
