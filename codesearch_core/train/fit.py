"""Rows against the model's context, counted before any step: a row longer than the context is
left out (cut, it would teach a call that stops halfway or a prompt without its task), and the
run says how many and how long the longest was. Pure: the worker hands in the token counts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from codesearch_core.errors import InputFileError


@dataclass(frozen=True, slots=True)
class ContextFit:
    """Which rows fit `limit` tokens: the kept indices, and the count and longest of the rest."""

    limit: int
    kept: tuple[int, ...]
    left_out: int
    longest: int
    what: str = "row"

    def message(self) -> str:
        if not self.left_out:
            return ""
        total = len(self.kept) + self.left_out
        return (
            f"{self.left_out} of {total} {self.what}s are longer than the {self.limit} tokens the "
            f"model's context leaves for them (the longest {self.longest}): left out"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "limit": self.limit,
            "kept": len(self.kept),
            "left_out": self.left_out,
            "longest": self.longest,
        }


def fit_context(lengths: Sequence[int], limit: int, what: str = "row") -> ContextFit:
    """Keep the rows of at most `limit` tokens. None left is an error that says why: a run on
    nothing would end 'successfully' with the base model's weights."""
    if limit < 1:
        raise InputFileError(
            f"the model's context leaves {limit} tokens for a {what}: nothing fits"
        )
    kept = tuple(i for i, n in enumerate(lengths) if n <= limit)
    fit = ContextFit(limit, kept, len(lengths) - len(kept), max(lengths, default=0), what)
    if lengths and not kept:
        raise InputFileError(
            f"all {len(lengths)} {what}s are longer than the {limit} tokens the model's context "
            f"leaves for them (the shortest {min(lengths)}): a model with a longer context is "
            "needed (or, for GRPO, a smaller --max-completion-length)"
        )
    return fit
