"""Span matching (one-to-one, maximum, tolerant), scores, file IoU and the findings diff."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codesearch_core.grading.spans import (
    Matching,
    diff_findings,
    f_beta,
    file_iou,
    grade,
    grade_and_diff,
    line_coverage,
    touched,
)
from codesearch_core.models import Finding, Grade, Span


def f(path: str, start: int, end: int | None = None, col: int = 1) -> Finding:
    end = start if end is None else end
    return Finding(path, start, col, end, col + 3, 0, 3, "abc")


def s(path: str, start: int, end: int | None = None) -> Span:
    return Span(path, start, start if end is None else end)


# ----------------------------------------------------------------------------- edge cases


def test_both_empty_is_a_perfect_grade() -> None:
    g = grade([], [])
    assert (g.span_precision, g.span_recall, g.span_f1, g.file_iou) == (1.0, 1.0, 1.0, 1.0)
    assert (g.n_predicted, g.n_expected, g.n_matched) == (0, 0, 0)


def test_nothing_found_when_something_was_expected_scores_zero() -> None:
    g = grade([], [s("a.py", 3)])
    assert (g.span_precision, g.span_recall, g.span_f1, g.file_iou) == (0.0, 0.0, 0.0, 0.0)
    assert g.n_expected == 1


def test_findings_when_nothing_was_expected_score_zero() -> None:
    g = grade([f("a.py", 3)], [])
    assert (g.span_precision, g.span_recall, g.span_f1, g.file_iou) == (0.0, 0.0, 0.0, 0.0)
    assert g.n_predicted == 1


def test_exact_match_is_perfect() -> None:
    g = grade([f("a.py", 3), f("b/c.go", 10, 12)], [s("a.py", 3), s("b/c.go", 10, 12)])
    assert g == Grade(1.0, 1.0, 1.0, 1.0, 2, 2, 2)


def test_partial_match_scores_precision_recall_and_f1() -> None:
    g = grade([f("a.py", 1), f("a.py", 5), f("a.py", 9)], [s("a.py", 1), s("a.py", 7)])
    assert g.n_matched == 1
    assert g.span_precision == pytest.approx(1 / 3)
    assert g.span_recall == pytest.approx(1 / 2)
    assert g.span_f1 == pytest.approx(2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2))


def test_same_lines_in_another_file_do_not_match() -> None:
    g = grade([f("a.py", 3)], [s("b.py", 3)])
    assert g.n_matched == 0
    assert g.file_iou == 0.0


# ----------------------------------------------------------------------------- collapsing


def test_submatches_on_one_line_collapse_to_one_predicted_span() -> None:
    # rg reports each submatch; for "did you find the right code" they are one answer.
    predicted = [f("a.py", 4, col=1), f("a.py", 4, col=20), f("a.py", 4, col=40)]
    g = grade(predicted, [s("a.py", 4)])
    assert (g.n_predicted, g.n_matched, g.span_precision, g.span_f1) == (1, 1, 1.0, 1.0)


def test_duplicate_predictions_count_once_and_are_not_extras() -> None:
    d = diff_findings([f("a.py", 4), f("a.py", 4), f("a.py", 4)], [s("a.py", 4)])
    assert len(d.hits) == 1
    assert d.extras == ()
    assert d.hits[0][0] == f("a.py", 4)


def test_duplicate_expected_spans_collapse_too() -> None:
    g = grade([f("a.py", 4)], [s("a.py", 4), s("a.py", 4)])
    assert (g.n_expected, g.n_matched, g.span_recall) == (1, 1, 1.0)


def test_different_line_ranges_on_the_same_start_are_distinct_spans() -> None:
    g = grade([f("a.py", 4, 4), f("a.py", 4, 6)], [s("a.py", 4, 6)])
    assert (g.n_predicted, g.n_matched) == (2, 1)


# ----------------------------------------------------------------------------- matching rule


def test_overlapping_multiline_spans_match() -> None:
    # A predicted call on line 12 inside an expected function spanning 10-20.
    g = grade([f("a.py", 12)], [s("a.py", 10, 20)])
    assert g.n_matched == 1


def test_adjacent_but_disjoint_spans_do_not_match_without_tolerance() -> None:
    assert grade([f("a.py", 5)], [s("a.py", 4)]).n_matched == 0
    assert grade([f("a.py", 5, 7)], [s("a.py", 8, 9)]).n_matched == 0


def test_tolerance_is_how_many_line_numbers_apart_spans_may_be() -> None:
    assert grade([f("a.py", 6)], [s("a.py", 4)], line_tolerance=1).n_matched == 0
    assert grade([f("a.py", 6)], [s("a.py", 4)], line_tolerance=2).n_matched == 1
    # Line 2 ends the prediction, line 5 starts the expected span: 3 lines apart.
    assert grade([f("a.py", 1, 2)], [s("a.py", 5, 9)], line_tolerance=3).n_matched == 1
    assert grade([f("a.py", 1, 2)], [s("a.py", 5, 9)], line_tolerance=2).n_matched == 0


def test_negative_tolerance_is_refused() -> None:
    with pytest.raises(ValueError, match="line_tolerance"):
        grade([f("a.py", 1)], [s("a.py", 1)], line_tolerance=-1)


def test_malformed_spans_are_refused() -> None:
    with pytest.raises(ValueError, match="start_line <= end_line"):
        grade([f("a.py", 5, 4)], [s("a.py", 1)])
    with pytest.raises(ValueError, match="expected"):
        grade([f("a.py", 1)], [s("a.py", 0)])


def test_one_expected_span_absorbs_only_one_prediction() -> None:
    # Three calls inside one expected function: one hit, two extras.
    d = diff_findings([f("a.py", 11), f("a.py", 12), f("a.py", 13)], [s("a.py", 10, 20)])
    assert len(d.hits) == 1
    assert len(d.extras) == 2
    assert d.misses == ()


def test_one_prediction_satisfies_only_one_expected_span() -> None:
    d = diff_findings([f("a.py", 1, 30)], [s("a.py", 2), s("a.py", 5), s("a.py", 9)])
    assert len(d.hits) == 1
    assert len(d.misses) == 2


def test_matching_is_maximum_not_first_come() -> None:
    # A naive greedy pairs the long prediction with the first expected span and misses one.
    predicted = [f("a.py", 1, 5), f("a.py", 1)]
    expected = [s("a.py", 1), s("a.py", 5)]
    g = grade(predicted, expected)
    assert g.n_matched == 2


def test_identical_spans_are_paired_when_that_loses_nothing() -> None:
    d = diff_findings([f("a.py", 3), f("a.py", 1, 3)], [s("a.py", 1, 3), s("a.py", 3)])
    pairs = {(h[0].start_line, h[0].end_line, h[1].start_line, h[1].end_line) for h in d.hits}
    assert pairs == {(1, 3, 1, 3), (3, 3, 3, 3)}


def test_diff_lists_hits_misses_and_extras_sorted() -> None:
    predicted = [f("b.py", 9), f("a.py", 2), f("a.py", 40)]
    expected = [s("a.py", 2), s("b.py", 1), s("a.py", 30)]
    d = diff_findings(predicted, expected)
    assert [(h[0].path, h[0].start_line) for h in d.hits] == [("a.py", 2)]
    assert d.misses == (s("a.py", 30), s("b.py", 1))
    assert [(x.path, x.start_line) for x in d.extras] == [("a.py", 40), ("b.py", 9)]


def test_grade_and_diff_agree_with_the_separate_functions() -> None:
    predicted = [f("a.py", 2), f("a.py", 3, 8), f("c.py", 1)]
    expected = [s("a.py", 2), s("a.py", 5), s("b.py", 1)]
    g, d = grade_and_diff(predicted, expected, line_tolerance=1)
    assert g == grade(predicted, expected, line_tolerance=1)
    assert d == diff_findings(predicted, expected, line_tolerance=1)
    assert len(d.hits) == g.n_matched


# ----------------------------------------------------------------------------- file IoU


def test_file_iou_is_intersection_over_union_of_paths() -> None:
    assert file_iou(["a", "b", "b"], ["b", "c"]) == pytest.approx(1 / 3)
    assert file_iou([], []) == 1.0
    assert file_iou(["a"], []) == 0.0


def test_grade_file_iou_ignores_line_agreement() -> None:
    g = grade([f("a.py", 1)], [s("a.py", 50)])
    assert g.file_iou == 1.0
    assert g.span_f1 == 0.0


# ----------------------------------------------------------------------------- properties

_span = st.builds(
    lambda p, start, length: Span(p, start, start + length),
    st.sampled_from(["a.py", "b.py", "src/c.go"]),
    st.integers(1, 15),
    st.sampled_from([0, 0, 0, 1, 2, 6]),
)
_spans = st.lists(_span, max_size=10)


def _maximum_matching_size(predicted: list[Span], expected: list[Span], tol: int) -> int:
    """Reference: augmenting paths over the full compatibility graph (Kuhn's algorithm)."""
    ps, es = sorted(set(predicted)), sorted(set(expected))
    adj = [
        [
            j
            for j, e in enumerate(es)
            if p.path == e.path
            and p.start_line <= e.end_line + tol
            and e.start_line <= p.end_line + tol
        ]
        for p in ps
    ]
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in adj[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return sum(augment(i, set()) for i in range(len(ps)))


@settings(max_examples=300, deadline=None)
@given(_spans, _spans, st.sampled_from([0, 0, 1, 3]))
def test_matched_count_is_the_maximum_one_to_one_matching(
    predicted: list[Span], expected: list[Span], tol: int
) -> None:
    g = grade(predicted, expected, line_tolerance=tol)
    assert g.n_matched == _maximum_matching_size(predicted, expected, tol)


@settings(max_examples=200, deadline=None)
@given(_spans, _spans, st.sampled_from([0, 2]))
def test_f1_and_file_iou_are_symmetric(a: list[Span], b: list[Span], tol: int) -> None:
    ab, ba = grade(a, b, line_tolerance=tol), grade(b, a, line_tolerance=tol)
    assert math.isclose(ab.span_f1, ba.span_f1)
    assert ab.file_iou == ba.file_iou
    assert math.isclose(ab.span_precision, ba.span_recall)


@settings(max_examples=200, deadline=None)
@given(_spans, _spans)
def test_diff_partitions_the_distinct_spans(predicted: list[Span], expected: list[Span]) -> None:
    findings = [Finding(x.path, x.start_line, 1, x.end_line, 2, 0, 1, "x") for x in predicted]
    d = diff_findings(findings, expected)
    assert len(d.hits) + len(d.misses) == len(set(expected))
    assert len(d.hits) + len(d.extras) == len(set(predicted))
    for p, e in d.hits:
        assert p.path == e.path and p.start_line <= e.end_line and e.start_line <= p.end_line


def test_more_tolerance_never_lowers_the_match_count() -> None:
    predicted = [f("a.py", n) for n in range(1, 40, 3)]
    expected = [s("a.py", n) for n in range(2, 40, 4)]
    counts = [grade(predicted, expected, line_tolerance=t).n_matched for t in range(5)]
    assert counts == sorted(counts)
    assert counts[0] < counts[-1]


# ----------------------------------------------------------------------------- coverage credit


def test_a_hit_on_the_first_line_of_a_function_earns_its_share_of_the_lines() -> None:
    # The README's worked example: a 7-line function hit on its first line, a 3-line span hit
    # exactly, and one extra in another file.
    predicted = [f("a.py", 10), f("a.py", 30, 32), f("b.py", 4)]
    expected = [s("a.py", 10, 16), s("a.py", 30, 32)]
    g = grade(predicted, expected)
    assert g.n_matched == 2
    assert g.span_precision == pytest.approx((1 / 7 + 1) / 3)
    assert g.span_recall == pytest.approx((1 / 7 + 1) / 2)
    assert round(g.span_f1, 3) == 0.457
    old = grade(predicted, expected, matching=Matching.OVERLAP)
    assert (old.span_precision, old.span_recall, round(old.span_f1, 3)) == (2 / 3, 1.0, 0.8)


def test_a_span_that_spills_past_the_expected_one_loses_what_it_spills() -> None:
    # Found 8-17 for expected 10-16: 7 lines covered, 3 spilled -> IoU 7/10.
    g = grade([f("a.py", 8, 17)], [s("a.py", 10, 16)])
    assert g.span_f1 == pytest.approx(0.7)
    cover = line_coverage(f("a.py", 8, 17), s("a.py", 10, 16))
    assert (cover.covered, cover.missed, cover.spilled) == (7, 0, 3)
    assert cover.iou == pytest.approx(0.7)


def test_nested_spans_pair_by_coverage_of_the_span_each_one_matched() -> None:
    # An expected method (5-9) inside an expected class (1-20); found exactly the method and the
    # class's first line. Identical spans pair first, so the method is a full hit and the class
    # earns 1/20 from its first line.
    g, diff = grade_and_diff([f("a.py", 5, 9), f("a.py", 1)], [s("a.py", 1, 20), s("a.py", 5, 9)])
    assert g.n_matched == 2
    assert g.span_recall == pytest.approx((1 + 1 / 20) / 2)
    assert {(e.start_line, p.start_line) for p, e in diff.hits} == {(5, 5), (1, 1)}


def test_adjacent_spans_earn_nothing_even_when_a_tolerance_pairs_them() -> None:
    # Within tolerance they pair (the diff calls it a hit), but no expected line is covered.
    g = grade([f("a.py", 5)], [s("a.py", 4)], line_tolerance=1)
    assert g.n_matched == 1
    assert g.span_f1 == 0.0
    assert grade([f("a.py", 5)], [s("a.py", 4)], line_tolerance=1,
                 matching=Matching.OVERLAP).span_f1 == 1.0  # fmt: skip


def test_exact_spans_earn_full_credit_under_either_rule() -> None:
    for matching in Matching:
        g = grade(
            [f("a.py", 3), f("b.py", 1, 9)], [s("a.py", 3), s("b.py", 1, 9)], matching=matching
        )
        assert (g.span_precision, g.span_recall, g.span_f1) == (1.0, 1.0, 1.0)


def test_findings_on_both_sides_are_credited_by_byte_ranges() -> None:
    # Same lines, but the found match covers 10 of the 40 expected bytes.
    found = Finding("a.py", 3, 1, 3, 11, 100, 110, "x" * 10)
    whole = Finding("a.py", 3, 1, 3, 41, 100, 140, "x" * 40)
    assert grade([found], [whole]).span_f1 == pytest.approx(10 / 40)
    assert grade([found], [Span("a.py", 3, 3)]).span_f1 == 1.0  # a Span has only lines


def test_an_empty_answer_seed_grades_one_for_nothing_and_zero_for_anything() -> None:
    assert grade([], []).span_f1 == 1.0
    assert grade([f("a.py", 1)], []).span_f1 == 0.0


@given(_spans, _spans)
@settings(max_examples=200, deadline=None)
def test_coverage_never_scores_above_overlap(predicted: list[Span], expected: list[Span]) -> None:
    cover = grade(predicted, expected)
    overlap = grade(predicted, expected, matching=Matching.OVERLAP)
    assert cover.n_matched == overlap.n_matched
    assert cover.span_f1 <= overlap.span_f1 + 1e-12
    assert 0.0 <= cover.span_precision <= 1.0 and 0.0 <= cover.span_recall <= 1.0


# ----------------------------------------------------------------------------- supporting spans


def sup(path: str, start: int, end: int | None = None) -> Span:
    return Span(path, start, start if end is None else end, supporting=True)


def test_a_supporting_span_is_neither_required_nor_penalised_as_documented() -> None:
    # The module docstring's example: b.py:7 is excused, c.py:1 is an extra, a.py:40-41 no miss.
    expected = [s("a.py", 10, 12), sup("a.py", 40, 41), sup("b.py", 7)]
    found = [f("a.py", 10, 12), f("b.py", 7), f("c.py", 1)]
    g, d = grade_and_diff(found, expected)
    assert (g.n_predicted, g.n_expected, g.n_matched) == (2, 1, 1)
    assert g.span_precision == 0.5 and g.span_recall == 1.0
    assert math.isclose(g.span_f1, 2 / 3) and g.file_iou == 0.5
    assert grade(found, expected) == g
    assert [e for _, e in d.hits] == [s("a.py", 10, 12)]
    assert d.misses == () and d.extras == (f("c.py", 1),)
    assert d.supporting == ((f("b.py", 7), sup("b.py", 7)),)
    assert diff_findings(found, expected) == d


def test_the_same_spans_unmarked_are_all_required_and_extras_cost_precision() -> None:
    expected = [s("a.py", 10, 12), s("a.py", 40, 41), s("b.py", 7)]
    found = [f("a.py", 10, 12), f("b.py", 7), f("c.py", 1)]
    g = grade(found, expected)
    assert (g.span_precision, g.span_recall) == (2 / 3, 2 / 3)
    assert grade(found, [sup("a.py", 40, 41), *expected[:1], sup("b.py", 7)]) != g


def test_an_essential_span_is_matched_before_a_supporting_one_claims_the_finding() -> None:
    # One finding on a line both spans hold: it counts for the essential span (recall 1).
    expected = [sup("a.py", 1, 5), s("a.py", 3)]
    g = grade([f("a.py", 3)], expected)
    assert (g.span_precision, g.span_recall, g.n_expected) == (1.0, 1.0, 1)


def test_a_supporting_span_excuses_one_finding_only() -> None:
    g = grade([f("a.py", 1), f("a.py", 2), f("b.py", 9)], [sup("a.py", 1, 2), s("b.py", 9)])
    assert (g.n_predicted, g.span_precision, g.span_recall) == (2, 0.5, 1.0)


def test_a_blueprint_of_only_supporting_spans_expects_nothing() -> None:
    expected = [sup("a.py", 3), sup("b.py", 4)]
    assert grade([], expected).span_f1 == 1.0
    assert grade([f("a.py", 3)], expected).span_f1 == 1.0
    assert grade([f("a.py", 3), f("c.py", 1)], expected).span_f1 == 0.0


@settings(max_examples=200, deadline=None)
@given(_spans, _spans)
def test_marking_spans_supporting_never_lowers_precision(
    predicted: list[Span], expected: list[Span]
) -> None:
    marked = [Span(e.path, e.start_line, e.end_line, i % 2 == 0) for i, e in enumerate(expected)]
    essential = [e for e in marked if not e.supporting]
    plain, with_marks = grade(predicted, essential), grade(predicted, marked)
    # The same essential spans, matched alike: what marks add can only excuse findings.
    if essential:  # (with none, excusing every finding makes nothing-for-nothing: 1)
        assert with_marks.span_recall == plain.span_recall
    assert with_marks.n_expected == plain.n_expected and with_marks.n_matched == plain.n_matched
    assert with_marks.n_predicted <= plain.n_predicted
    assert with_marks.span_precision >= plain.span_precision


@settings(max_examples=200, deadline=None)
@given(_spans, _spans)
def test_with_marks_the_diff_still_partitions_the_distinct_spans(
    predicted: list[Span], expected: list[Span]
) -> None:
    marked = [Span(e.path, e.start_line, e.end_line, i % 3 == 0) for i, e in enumerate(expected)]
    findings = [Finding(x.path, x.start_line, 1, x.end_line, 2, 0, 1, "x") for x in predicted]
    g, d = grade_and_diff(findings, marked)
    essential = {e for e in marked if not e.supporting}
    assert len(d.hits) + len(d.misses) == len(essential) == g.n_expected
    assert len(d.hits) + len(d.extras) + len(d.supporting) == len(set(predicted))
    assert len(d.hits) + len(d.extras) == g.n_predicted and len(d.hits) == g.n_matched
    assert all(e.supporting for _, e in d.supporting)
    assert all(not e.supporting for _, e in d.hits) and all(not e.supporting for e in d.misses)


# ----------------------------------------------------------------------------- F-beta, touched


@settings(max_examples=200, deadline=None)
@given(_spans, _spans)
def test_f_beta_one_is_f1_to_the_bit(predicted: list[Span], expected: list[Span]) -> None:
    g = grade(predicted, expected)
    assert f_beta(g, 1.0) == g.span_f1
    assert math.isclose(f_beta(g, 1.0 + 1e-12), g.span_f1, abs_tol=1e-9)


def test_f_beta_below_one_weighs_precision_above_recall() -> None:
    precise = grade([s("a.py", 1)], [s("a.py", 1), s("a.py", 5)])  # P 1, R 0.5
    greedy = grade([s("a.py", n) for n in (1, 2, 5)], [s("a.py", 1), s("a.py", 5)])  # P 2/3, R 1
    assert precise.span_f1 < greedy.span_f1
    assert math.isclose(f_beta(precise, 0.5), 1.25 * 0.5 / (0.25 + 0.5))
    assert f_beta(precise, 0.5) > f_beta(greedy, 0.5)
    assert f_beta(precise, 2.0) < f_beta(greedy, 2.0)
    assert f_beta(grade([], []), 0.5) == 1.0 and f_beta(grade([], [s("a.py", 1)]), 0.5) == 0.0


def test_touched_names_the_expected_spans_that_share_a_line_with_any_span() -> None:
    expected = [s("a.py", 1, 3), s("a.py", 10, 12), s("b.py", 5), s("a.py", 20, 30)]
    assert touched(expected, [f("a.py", 2), f("a.py", 13, 14), f("a.py", 1, 25)]) == {0, 1, 3}
    assert touched(expected, [s("a.py", 11), s("b.py", 4), s("b.py", 5, 6)]) == {1, 2}
    assert touched(expected, [s("c.py", 1, 99)]) == set() and touched([], [s("a.py", 1)]) == set()
