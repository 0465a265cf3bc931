"""What a reviewer compares: calls field by field, findings as hit / miss / extra."""

from __future__ import annotations

from codesearch_core.grading.spans import diff_findings
from codesearch_core.models import Finding, Span
from codesearch_core.studio.code import Tone
from codesearch_core.studio.diff import Change, FindingStatus, call_diff, finding_rows


def finding(path: str, start: int, end: int | None = None, col: int = 5) -> Finding:
    end = start if end is None else end
    return Finding(path, start, col, end, col + 3, 0, 3, "abc")


def test_call_diff_names_every_leaf_field_and_how_it_changed() -> None:
    reference = {
        "name": "ripgrep_search",
        "arguments": {"pattern": "a", "pcre2": True, "paths": ["x"]},
    }
    proposed = {
        "name": "ripgrep_search",
        "arguments": {"pattern": "b", "paths": ["x"], "word": True},
    }
    rows = {r.field: (r.change, r.reference, r.proposed) for r in call_diff(reference, proposed)}
    assert rows == {
        "name": (Change.SAME, '"ripgrep_search"', '"ripgrep_search"'),
        "arguments.pattern": (Change.CHANGED, '"a"', '"b"'),
        "arguments.pcre2": (Change.REMOVED, "true", ""),
        "arguments.paths": (Change.SAME, '["x"]', '["x"]'),
        "arguments.word": (Change.ADDED, "", "true"),
    }


def test_call_diff_walks_into_nested_rules() -> None:
    reference = {
        "name": "ast_grep_search",
        "arguments": {"rule": {"pattern": "f($A)", "inside": {"kind": "class"}}},
    }
    proposed = {
        "name": "ast_grep_search",
        "arguments": {"rule": {"pattern": "f($A)", "inside": {"kind": "function"}}},
    }
    changed = [r.field for r in call_diff(reference, proposed) if r.change is Change.CHANGED]
    assert changed == ["arguments.rule.inside.kind"]


def test_an_unparsed_proposal_shows_every_reference_field_as_removed() -> None:
    rows = call_diff({"name": "ripgrep_search", "arguments": {"pattern": "a"}}, None)
    assert {r.change for r in rows} == {Change.REMOVED}


def test_finding_rows_label_hits_misses_and_extras_in_file_order() -> None:
    found = [finding("b.py", 3), finding("a.py", 10), finding("a.py", 1)]
    expected = [Span("a.py", 1, 1), Span("a.py", 5, 6), Span("b.py", 3, 3)]
    rows = finding_rows(diff_findings(found, expected))
    assert [(r.status, r.path, r.start_line) for r in rows] == [
        (FindingStatus.HIT, "a.py", 1),
        (FindingStatus.MISS, "a.py", 5),
        (FindingStatus.EXTRA, "a.py", 10),
        (FindingStatus.HIT, "b.py", 3),
    ]
    assert rows[1].lines_label == "L5-6" and rows[1].found is None


def test_a_partial_hit_says_what_it_covers_and_marks_the_missed_lines() -> None:
    (row,) = finding_rows(diff_findings([finding("a.py", 4, col=7)], [Span("a.py", 3, 5)]))
    assert row.status is FindingStatus.HIT
    assert row.lines_label == "L4 (expected L3-5: covers 1 of 3 lines)"
    assert row.coverage is not None and row.coverage.partial
    assert (row.mark.tone, row.mark.start_col, row.mark.end_col) == (Tone.HIT, 7, 10)
    # The found line in the hit tone, the expected lines around it that it missed as misses.
    assert [(m.start_line, m.end_line, m.tone) for m in row.marks] == [
        (4, 4, Tone.HIT),
        (3, 3, Tone.MISS),
        (5, 5, Tone.MISS),
    ]


def test_a_hit_that_spills_past_the_expected_span_counts_the_spilled_lines() -> None:
    (row,) = finding_rows(diff_findings([finding("a.py", 2, end=6)], [Span("a.py", 3, 5)]))
    assert row.lines_label == "L2-6 (expected L3-5: covers 3 of 3 lines, 2 spilled)"
    assert [m.tone for m in row.marks] == [Tone.HIT]


def test_an_exact_hit_has_a_plain_label_and_one_mark() -> None:
    (row,) = finding_rows(diff_findings([finding("a.py", 3, end=5)], [Span("a.py", 3, 5)]))
    assert row.lines_label == "L3-5"
    assert row.coverage is not None and not row.coverage.partial
    assert len(row.marks) == 1


def test_a_miss_marks_whole_lines() -> None:
    (row,) = finding_rows(diff_findings([], [Span("a.py", 3, 5)]))
    assert (row.mark.start_line, row.mark.end_line, row.mark.start_col) == (3, 5, 0)
    assert row.mark.tone is Tone.MISS
