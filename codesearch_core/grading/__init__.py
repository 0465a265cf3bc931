"""Grading a run against a blueprint's expected spans, and the training reward built from the grade.

Public API: `grade` / `diff_findings` / `grade_and_diff`, `f_beta`, `Matching` (`grading.spans`:
matching, credit, scores and supporting spans; `touched`: the expected spans some spans share a
line with) and
`reward` / `breaks_pcre2_rule` (`grading.rewards`: the scalar reward, its components and the
PCRE2 rule). Imports `tools` and below.
"""

from codesearch_core.grading.rewards import breaks_pcre2_rule, reward, score
from codesearch_core.grading.spans import (
    DEFAULT_MATCHING,
    FindingsDiff,
    LineCoverage,
    Matching,
    diff_findings,
    f_beta,
    grade,
    grade_and_diff,
    line_coverage,
    touched,
)

__all__ = [
    "DEFAULT_MATCHING",
    "FindingsDiff",
    "LineCoverage",
    "Matching",
    "breaks_pcre2_rule",
    "diff_findings",
    "f_beta",
    "grade",
    "grade_and_diff",
    "line_coverage",
    "reward",
    "score",
    "touched",
]
