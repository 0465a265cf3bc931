"""Rows against the model's context: what is left out is counted and said."""

from __future__ import annotations

import pytest

from codesearch_core.errors import InputFileError
from codesearch_core.train import fit_context


def test_rows_longer_than_the_context_are_left_out_and_counted() -> None:
    fit = fit_context([10, 50, 30, 51, 100], 50)
    assert fit.kept == (0, 1, 2)
    assert (fit.left_out, fit.longest, fit.limit) == (2, 100, 50)
    assert fit.message() == (
        "2 of 5 rows are longer than the 50 tokens the model's context leaves for them "
        "(the longest 100): left out"
    )
    assert fit.to_dict() == {"limit": 50, "kept": 3, "left_out": 2, "longest": 100}


def test_all_fitting_says_nothing() -> None:
    fit = fit_context([3, 4], 4, "prompt")
    assert fit.left_out == 0 and fit.message() == ""


def test_nothing_fitting_is_an_error_that_says_why() -> None:
    with pytest.raises(
        InputFileError, match=r"all 2 prompts are longer than the 8 tokens .*shortest 9"
    ):
        fit_context([9, 12], 8, "prompt")
    with pytest.raises(InputFileError, match="leaves 0 tokens"):
        fit_context([1], 0)
