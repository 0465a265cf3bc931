"""The plain-Python grade of small answers (`grading.small`) gives the numpy path's very floats."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codesearch_core.grading.small import SMALL_GRADE_SPANS, grade_small, numpy_sum
from codesearch_core.grading.spans import Matching, _grade_from, _match, grade
from codesearch_core.models import Finding, Grade, Span

_PATHS = st.sampled_from(["a.py", "b.py", "src/c.go", "d/e.ts"])


@st.composite
def _span(draw: st.DrawFn) -> Span:
    start = draw(st.integers(1, 40))
    return Span(draw(_PATHS), start, start + draw(st.sampled_from([0, 0, 0, 1, 2, 6, 15])))


@st.composite
def _finding(draw: st.DrawFn) -> Finding:
    span = draw(_span())
    byte_start = draw(st.integers(0, 400))
    byte_end = byte_start + draw(st.sampled_from([0, 1, 3, 10, 80, 300]))
    return Finding(span.path, span.start_line, 1, span.end_line, 2, byte_start, byte_end, "x")


_side = st.one_of(
    st.lists(_span(), max_size=40),
    st.lists(_finding(), max_size=40),
    st.lists(st.one_of(_span(), _finding()), max_size=12),
)


def _numpy_grade(
    predicted: list[Finding | Span], expected: list[Span | Finding], tol: int, matching: Matching
) -> Grade:
    return _grade_from(_match(predicted, expected, tol, matching))


@settings(max_examples=600, deadline=None)
@given(_side, _side, st.sampled_from([0, 0, 1, 3]), st.sampled_from(list(Matching)))
def test_small_grade_is_the_numpy_grade_to_the_bit(
    predicted: list[Finding | Span], expected: list[Span | Finding], tol: int, matching: Matching
) -> None:
    small = grade_small(predicted, expected, tol, overlap=matching is Matching.OVERLAP)
    assert small == _numpy_grade(predicted, expected, tol, matching)
    assert grade(predicted, expected, line_tolerance=tol, matching=matching) == small


def test_crowded_clusters_grade_alike() -> None:
    # Many spans on a few lines of one file: every cluster is crowded, the greedy matching runs.
    predicted = [Span("a.py", 1 + i % 7, 1 + i % 7 + i % 3) for i in range(60)]
    predicted += [
        Finding("a.py", 3, 1, 5, 2, 10 * i, 10 * i + i, "x") for i in range(20)
    ]  # fmt: skip
    expected = [Span("a.py", 2 + i % 5, 2 + i % 5 + i % 4) for i in range(50)]
    for matching in Matching:
        for tol in (0, 2):
            small = grade_small(predicted, expected, tol, overlap=matching is Matching.OVERLAP)
            assert small == _numpy_grade(predicted, expected, tol, matching)


def test_big_inputs_take_the_numpy_path_and_agree() -> None:
    n = SMALL_GRADE_SPANS
    predicted = [Span(f"f{i % 9}.py", 1 + i, 1 + i + i % 4) for i in range(n)]
    expected = [Span(f"f{i % 7}.py", 2 + i, 2 + i) for i in range(n)]
    assert grade(predicted, expected) == grade_small(predicted, expected, 0, overlap=False)


@given(st.lists(st.floats(0, 1), max_size=400))
def test_numpy_sum_adds_in_numpys_order(values: list[float]) -> None:
    assert numpy_sum(values) == float(np.array(values, dtype=np.float64).sum())


def test_malformed_spans_are_refused_alike() -> None:
    with pytest.raises(ValueError, match="predicted spans need"):
        grade([Span("a.py", 0, 1)], [])
    with pytest.raises(ValueError, match="expected spans need"):
        grade([], [Span("a.py", 3, 2)])
    with pytest.raises(ValueError, match="line_tolerance"):
        grade([], [], line_tolerance=-1)
