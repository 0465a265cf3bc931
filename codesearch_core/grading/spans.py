"""Grading predicted findings against expected spans: matching, scores and the findings diff.

Matching rule
-------------
1. Both sides are collapsed to distinct spans `(path, start_line, end_line)` first. Two submatches on
   one line (rg reports each), or the same finding twice, are ONE predicted span: the grade asks "did
   the call find the right code", not "how many times". Duplicate expected spans collapse the same way.
   `n_predicted` and `n_expected` count distinct spans.
2. A predicted span and an expected span can match when the paths are equal and the line ranges are at
   most `line_tolerance` lines apart: `p.start <= e.end + tol and e.start <= p.end + tol` (with
   tolerance 0 they must share at least one line).
3. Matching is one-to-one and of maximum size: each expected span is matched at most once, each
   predicted span at most once, and no other one-to-one matching has more pairs. Spans are grouped into
   clusters of overlapping ranges; a cluster with one span per side is a pair, bigger clusters are
   solved exactly by a greedy sweep (expected spans by increasing end, each taking the available
   overlapping predicted span with the smallest end), which is optimal for intervals. Among maximum
   matchings the one that pairs identical spans first is preferred, so diffs read naturally.

Credit (`matching`)
-------------------
A matched pair earns credit, and the scores add credit up instead of counting pairs:

- `coverage` (the default): the pair's intersection over union. Over lines, the lines in both
  spans over the lines in either; over byte ranges when both sides are
  Findings (they carry `byte_start`/`byte_end`), so a match that covers the whole function earns 1,
  a hit on its first line of seven earns 1/7, and a span that spills past the expected one loses
  what it spills.
- `overlap`: every matched pair earns 1 (the rule before coverage: touching the span is enough).

Scores: `span_precision = credit / n_predicted`, `span_recall = credit / n_expected`, `span_f1`
their harmonic mean, `file_iou = len(P & E) / len(P | E)` over the sets of paths. A ratio whose
denominator is zero is 1.0 when both sides are empty (nothing expected, nothing found: perfect) and
0.0 otherwise, so nothing-found-when-something-was-expected and something-found-when-nothing-was-
expected both score 0. With that convention F1 and file IoU are symmetric in predicted and expected
(`grade` takes Spans as predictions too). Worked example: expected `a.py:10-16` (a 7-line
function) and `a.py:30-32`; found `a.py:10` (its first line), `a.py:30-32` and `b.py:4`. Two pairs
match, with credit 1/7 and 3/3: precision (1/7 + 1) / 3 = 0.381, recall (1/7 + 1) / 2 = 0.571,
F1 0.457; under `overlap` they would be 2/3, 2/2 and 0.8.

Speed: the columns are pulled out once and everything but crowded clusters is vectorized with numpy,
so a million predicted against a million expected spans grade in under a second on an idle core
(`benchmarks/bench_grader.py`). numpy's fixed cost per operation would dominate a small grade, so
`grade` on a few hundred spans or fewer runs the same steps on lists (`grading.small`: same floats).

Supporting spans
----------------
A blueprint's expected span may be marked `supporting` (`Span.supporting`: context a good answer
may point at, not the answer; Prime's essential / supporting gold spans). Such spans are neither
required nor penalised. The predicted spans are matched to the essential spans first, by the rule
above; the ones left unmatched are then matched one-to-one to the supporting spans (any shared
line, within the tolerance, is enough), and each so matched is *excused*: it counts neither in
`n_predicted` nor in file IoU's predicted paths. So `span_precision = credit / (n_predicted -
excused)`, `span_recall = credit / n_essential`, and file IoU is over the excused-free predicted
paths against the essential spans' paths. A blueprint without marks grades exactly as before (the
same code path); one whose spans are all supporting expects nothing, so submitting nothing, or
only supporting spans, is perfect. Example: essential `a.py:10-12`, supporting `a.py:40-41` and
`b.py:7`; found `a.py:10-12`, `b.py:7` and `c.py:1`: `b.py:7` is excused, precision 1/2, recall
1/1, F1 0.667, file IoU 1/2 (`a.py` against `{a.py, c.py}`).

F-beta
------
`f_beta(grade, beta)` weighs precision beta times less than recall (SWE-grep trains with beta 0.5:
precision counts more): `(1 + b²)·P·R / (b²·P + R)`, with the ratio convention above; beta 1 is
`span_f1`, exactly.

The reward built from the grade is in `grading.rewards`.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from operator import attrgetter
from typing import Final

import numpy as np
import numpy.typing as npt

from codesearch_core.grading.small import (
    SMALL_GRADE_SPANS,
    cluster_pairs,
    grade_small,
    ratio,
    scores,
)
from codesearch_core.models import Finding, Grade, Span

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


class Matching(StrEnum):
    """How much a matched pair of spans earns (module docstring)."""

    COVERAGE = "coverage"
    OVERLAP = "overlap"


DEFAULT_MATCHING: Final = Matching.COVERAGE

_PATH: Final = attrgetter("path")
_SUPPORTING: Final = attrgetter("supporting")
_START: Final = attrgetter("start_line")
_END: Final = attrgetter("end_line")


@dataclass(frozen=True, slots=True)
class FindingsDiff:
    """Which expected spans were found (`hits`), missed (`misses`), and what was found beyond them.

    One entry per distinct span (see the module docstring): for a predicted span reported several
    times, the first Finding stands for it. All three tuples are sorted by path and line.
    """

    hits: tuple[tuple[Finding, Span], ...]
    misses: tuple[Span, ...]
    extras: tuple[Finding, ...]
    #: Findings excused by a supporting span (module docstring), with it: neither hits nor
    #: extras; a supporting span nothing found is no miss.
    supporting: tuple[tuple[Finding, Span], ...] = ()


@dataclass(frozen=True, slots=True)
class _Matching:
    """Indices into the caller's sequences: one representative per distinct span, and the pairs."""

    predicted_distinct: IntArray
    expected_distinct: IntArray
    predicted_hit: IntArray
    expected_hit: IntArray
    credit: FloatArray  # per pair, in [0, 1]
    file_iou: float


def _distinct(starts: IntArray, ends: IntArray) -> IntArray:
    """Index of the first occurrence of each distinct (start, end), in (start, end) order."""
    order = np.lexsort((ends, starts))  # stable: among duplicates the earliest input comes first
    s, e = starts[order], ends[order]
    keep = np.ones(len(order), dtype=bool)
    keep[1:] = (s[1:] != s[:-1]) | (e[1:] != e[:-1])
    firsts: IntArray = order[keep]
    return firsts


def _iou(
    p_start: IntArray, p_end: IntArray, e_start: IntArray, e_end: IntArray, *, inclusive: bool
) -> FloatArray:
    """Intersection over union of interval pairs (inclusive line ranges or half-open byte ranges)."""
    extra = 1 if inclusive else 0
    inter = np.maximum(0, np.minimum(p_end, e_end) - np.maximum(p_start, e_start) + extra)
    union = (p_end - p_start + extra) + (e_end - e_start + extra) - inter
    same = (p_start == e_start) & (p_end == e_end)
    # Two empty byte ranges (a zero-width match) have no union: equal ones are a full match.
    iou: FloatArray = np.where(union > 0, inter / np.maximum(union, 1), same.astype(np.float64))
    return iou


def _byte_columns(items: Sequence[Finding | Span]) -> tuple[IntArray, IntArray] | None:
    if not items or not all(isinstance(x, Finding) for x in items):
        return None
    n = len(items)
    starts = np.fromiter((x.byte_start for x in items if isinstance(x, Finding)), np.int64, n)
    ends = np.fromiter((x.byte_end for x in items if isinstance(x, Finding)), np.int64, n)
    return starts, ends


def _credit(
    predicted: Sequence[Finding | Span],
    expected: Sequence[Span | Finding],
    p_hit: IntArray,
    e_hit: IntArray,
    lines: tuple[IntArray, IntArray, IntArray, IntArray],
    matching: Matching,
) -> FloatArray:
    if matching is Matching.OVERLAP or len(p_hit) == 0:
        return np.ones(len(p_hit), dtype=np.float64)
    p_bytes, e_bytes = _byte_columns(predicted), _byte_columns(expected)
    if p_bytes is not None and e_bytes is not None:
        return _iou(p_bytes[0][p_hit], p_bytes[1][p_hit], e_bytes[0][e_hit], e_bytes[1][e_hit],
                    inclusive=False)  # fmt: skip
    p_start, p_end, e_start, e_end = lines
    return _iou(p_start[p_hit], p_end[p_hit], e_start[e_hit], e_end[e_hit], inclusive=True)


def _match(
    predicted: Sequence[Finding | Span],
    expected: Sequence[Span | Finding],
    tol: int,
    matching: Matching = DEFAULT_MATCHING,
) -> _Matching:
    if tol < 0:
        raise ValueError(f"line_tolerance must be >= 0, got {tol}")
    # Columns via C-level map + attrgetter, and one shared path->id dict: no per-span tuples,
    # which is what keeps a million spans well under a second.
    path_ids: dict[str, int] = {}
    counter = itertools.count()
    n_p, n_e = len(predicted), len(expected)
    p_id = np.fromiter(map(path_ids.setdefault, map(_PATH, predicted), counter), np.int64, n_p)
    e_id = np.fromiter(map(path_ids.setdefault, map(_PATH, expected), counter), np.int64, n_e)
    p_start = np.fromiter(map(_START, predicted), np.int64, n_p)
    p_end = np.fromiter(map(_END, predicted), np.int64, n_p)
    e_start = np.fromiter(map(_START, expected), np.int64, n_e)
    e_end = np.fromiter(map(_END, expected), np.int64, n_e)
    for name, starts, ends in (("predicted", p_start, p_end), ("expected", e_start, e_end)):
        if len(starts) and (starts.min() < 1 or bool(np.any(ends < starts))):
            raise ValueError(f"{name} spans need 1 <= start_line <= end_line")

    in_predicted = np.zeros(n_p + n_e, dtype=bool)
    in_expected = np.zeros(n_p + n_e, dtype=bool)
    in_predicted[p_id] = True
    in_expected[e_id] = True
    files_either = int(np.count_nonzero(in_predicted | in_expected))
    files_both = int(np.count_nonzero(in_predicted & in_expected))
    iou = files_both / files_either if files_either else 1.0

    # Lines of different files are put far apart on one axis, so clusters never cross files.
    max_line = int(max(p_end.max(initial=0), e_end.max(initial=0)))
    stride = max_line + tol + 2
    if (n_p + n_e + 1) * stride >= 2**62:
        raise ValueError("line numbers too large to grade")
    p_start += p_id * stride
    p_end += p_id * stride
    e_start += e_id * stride
    e_end += e_id * stride

    p_distinct = _distinct(p_start, p_end)
    e_distinct = _distinct(e_start, e_end)
    empty = np.zeros(0, dtype=np.int64)
    if len(p_distinct) == 0 or len(e_distinct) == 0:
        return _Matching(p_distinct, e_distinct, empty, empty, np.zeros(0), iou)

    starts = np.concatenate((p_start[p_distinct], e_start[e_distinct]))
    ends = np.concatenate((p_end[p_distinct], e_end[e_distinct]))
    side = np.concatenate((np.zeros(len(p_distinct), np.int64), np.ones(len(e_distinct), np.int64)))
    origin = np.concatenate((p_distinct, e_distinct))
    order = np.lexsort((side, ends, starts))
    starts, ends, side, origin = starts[order], ends[order], side[order], origin[order]

    reach = np.maximum.accumulate(ends)
    new_cluster = np.ones(len(starts), dtype=bool)
    new_cluster[1:] = starts[1:] > reach[:-1] + tol
    cluster = np.cumsum(new_cluster) - 1
    n_clusters = int(cluster[-1]) + 1
    n_pred = np.bincount(cluster[side == 0], minlength=n_clusters)
    n_exp = np.bincount(cluster[side == 1], minlength=n_clusters)

    # The common case, one predicted and one expected span overlapping: adjacent rows, a pair.
    single = (n_pred == 1) & (n_exp == 1)
    rows = np.flatnonzero(single[cluster]).reshape(-1, 2)
    first_is_pred = side[rows[:, 0]] == 0
    pred_rows = np.where(first_is_pred, rows[:, 0], rows[:, 1])
    exp_rows = np.where(first_is_pred, rows[:, 1], rows[:, 0])
    p_hit: list[int] = origin[pred_rows].tolist()
    e_hit: list[int] = origin[exp_rows].tolist()

    crowded = (n_pred >= 1) & (n_exp >= 1) & ~single
    crowded_rows = np.flatnonzero(crowded[cluster])
    if len(crowded_rows):
        bounds = np.flatnonzero(np.diff(cluster[crowded_rows])) + 1
        for group in np.split(crowded_rows, bounds):
            members = zip(
                starts[group].tolist(),
                ends[group].tolist(),
                origin[group].tolist(),
                side[group].tolist(),
                strict=True,
            )
            preds: list[tuple[int, int, int]] = []
            exps: list[tuple[int, int, int]] = []
            for s, e, o, sd in members:
                (exps if sd else preds).append((s, e, o))
            for p, x in cluster_pairs(preds, exps, tol):
                p_hit.append(p)
                e_hit.append(x)
    p_pairs = np.array(p_hit, dtype=np.int64)
    e_pairs = np.array(e_hit, dtype=np.int64)
    lines = (p_start, p_end, e_start, e_end)  # offset per file alike, so differences are right
    credit = _credit(predicted, expected, p_pairs, e_pairs, lines, matching)
    return _Matching(p_distinct, e_distinct, p_pairs, e_pairs, credit, iou)


@dataclass(frozen=True, slots=True)
class LineCoverage:
    """How a found span covers the expected span it was paired with, in lines."""

    covered: int  # expected lines the finding is on
    missed: int  # expected lines it is not on
    spilled: int  # lines it is on beyond the expected span

    @property
    def partial(self) -> bool:
        return bool(self.missed or self.spilled)

    @property
    def iou(self) -> float:
        return self.covered / (self.covered + self.missed + self.spilled)


def line_coverage(found: Finding | Span, expected: Span | Finding) -> LineCoverage:
    """The covered, missed and spilled lines of one matched pair (what the review card shows)."""
    covered = max(
        0, min(found.end_line, expected.end_line) - max(found.start_line, expected.start_line) + 1
    )
    return LineCoverage(
        covered=covered,
        missed=expected.end_line - expected.start_line + 1 - covered,
        spilled=found.end_line - found.start_line + 1 - covered,
    )


def touched(expected: Sequence[Span], spans: Iterable[Finding | Span]) -> set[int]:
    """Indices of the `expected` spans that share at least one line with one of `spans` (what an
    agent's searches showed it of the answer: the gym's evidence drop)."""
    # Only the files of the expected spans matter: a search's other findings are skipped at the
    # cost of one set lookup each (a turn's searches may return thousands).
    by_path: dict[str, list[tuple[int, int]]] = {e.path: [] for e in expected}
    for x in spans:
        if (ranges := by_path.get(x.path)) is not None:
            ranges.append((x.start_line, x.end_line))
    reach: dict[str, tuple[list[int], list[int]]] = {}
    for path, ranges in by_path.items():
        ranges.sort()
        # Sorted starts and the furthest end among the ranges starting at or before each.
        reach[path] = (
            [r[0] for r in ranges],
            list(itertools.accumulate((r[1] for r in ranges), max)),
        )
    hit: set[int] = set()
    for i, e in enumerate(expected):
        starts, ends = reach[e.path]
        k = bisect.bisect_right(starts, e.end_line)
        if k and ends[k - 1] >= e.start_line:
            hit.add(i)
    return hit


def file_iou(predicted_paths: Iterable[str], expected_paths: Iterable[str]) -> float:
    """Intersection over union of the two sets of paths; 1.0 when both are empty."""
    p, e = set(predicted_paths), set(expected_paths)
    union = len(p | e)
    return len(p & e) / union if union else 1.0


@dataclass(frozen=True, slots=True)
class _Marked:
    """A matching against a blueprint with supporting spans (module docstring): `essential` is over
    the essential spans (its expected indices index `essential_at`, which maps them back)."""

    essential: _Matching
    essential_at: list[int]
    excused: list[tuple[int, int]]  # (predicted index, expected index of the supporting span)
    file_iou: float


def _has_supporting(expected: Sequence[Span | Finding]) -> bool:
    return any(map(_SUPPORTING, expected))


def _match_marked(
    predicted: Sequence[Finding | Span],
    expected: Sequence[Span | Finding],
    tol: int,
    matching: Matching,
) -> _Marked:
    essential_at = [i for i, x in enumerate(expected) if not x.supporting]
    supporting_at = [i for i, x in enumerate(expected) if x.supporting]
    essential = [expected[i] for i in essential_at]
    m = _match(predicted, essential, tol, matching)
    hit = set(m.predicted_hit.tolist())
    left = [p for p in m.predicted_distinct.tolist() if p not in hit]
    # Only which predicted spans a supporting span excuses matters, not how much they cover it.
    extra = _match([predicted[p] for p in left], [expected[i] for i in supporting_at], tol,
                   Matching.OVERLAP)  # fmt: skip
    excused = [
        (left[p], supporting_at[e])
        for p, e in zip(extra.predicted_hit.tolist(), extra.expected_hit.tolist(), strict=True)
    ]
    excused_p = {p for p, _ in excused}
    counted = (predicted[p].path for p in m.predicted_distinct.tolist() if p not in excused_p)
    return _Marked(m, essential_at, excused, file_iou(counted, map(_PATH, essential)))


def _grade_marked(marked: _Marked) -> Grade:
    m = marked.essential
    return scores(
        len(m.predicted_distinct) - len(marked.excused),
        len(m.expected_distinct),
        len(m.predicted_hit),
        float(m.credit.sum()),
        marked.file_iou,
    )


def f_beta(g: Grade, beta: float) -> float:
    """The span F-beta of a grade (module docstring); `span_f1` itself when beta is 1."""
    if beta == 1.0:
        return g.span_f1
    p, r, b2 = g.span_precision, g.span_recall, beta * beta
    both_empty = g.n_predicted == 0 and g.n_expected == 0
    return ratio((1 + b2) * p * r, b2 * p + r, both_empty=both_empty)


def _grade_from(matching: _Matching) -> Grade:
    return scores(
        len(matching.predicted_distinct),
        len(matching.expected_distinct),
        len(matching.predicted_hit),
        float(matching.credit.sum()),
        matching.file_iou,
    )


def grade(
    predicted: Sequence[Finding | Span],
    expected: Sequence[Span | Finding],
    *,
    line_tolerance: int = 0,
    matching: Matching = DEFAULT_MATCHING,
) -> Grade:
    """Span precision/recall/F1 and file IoU of `predicted` against `expected` (module docstring;
    spans of `expected` marked supporting are neither required nor penalised)."""
    if _has_supporting(expected):
        return _grade_marked(_match_marked(predicted, expected, line_tolerance, matching))
    if line_tolerance >= 0 and len(predicted) + len(expected) <= SMALL_GRADE_SPANS:
        # The same grade without numpy's fixed cost per array operation (`grading.small`).
        overlap = matching is Matching.OVERLAP
        return grade_small(predicted, expected, line_tolerance, overlap=overlap)
    return _grade_from(_match(predicted, expected, line_tolerance, matching))


def _span_key(x: Finding | Span) -> tuple[str, int, int]:
    return (x.path, x.start_line, x.end_line)


def _diff_from(
    m: _Matching, predicted: Sequence[Finding], expected: Sequence[Span]
) -> FindingsDiff:
    p_hits, e_hits = m.predicted_hit.tolist(), m.expected_hit.tolist()
    hit_p, hit_e = set(p_hits), set(e_hits)
    hits = sorted(
        ((predicted[p], expected[e]) for p, e in zip(p_hits, e_hits, strict=True)),
        key=lambda pair: (_span_key(pair[1]), _span_key(pair[0])),
    )
    misses = [expected[e] for e in m.expected_distinct.tolist() if e not in hit_e]
    extras = [predicted[p] for p in m.predicted_distinct.tolist() if p not in hit_p]
    return FindingsDiff(
        tuple(hits), tuple(sorted(misses, key=_span_key)), tuple(sorted(extras, key=_span_key))
    )


def _diff_marked(
    marked: _Marked, predicted: Sequence[Finding], expected: Sequence[Span]
) -> FindingsDiff:
    essential = [expected[i] for i in marked.essential_at]
    d = _diff_from(marked.essential, predicted, essential)
    excused = {id(predicted[p]) for p, _ in marked.excused}  # `_diff_from`'s extras are these
    pairs = sorted(((predicted[p], expected[e]) for p, e in marked.excused),
                   key=lambda pair: (_span_key(pair[1]), _span_key(pair[0])))  # fmt: skip
    extras = tuple(x for x in d.extras if id(x) not in excused)
    return FindingsDiff(d.hits, d.misses, extras, tuple(pairs))


def diff_findings(
    predicted: Sequence[Finding], expected: Sequence[Span], *, line_tolerance: int = 0
) -> FindingsDiff:
    """The matching behind `grade`, as pairs and leftovers a person can read (the pairs are the
    same under either `Matching`; only their credit differs)."""
    if _has_supporting(expected):
        marked = _match_marked(predicted, expected, line_tolerance, DEFAULT_MATCHING)
        return _diff_marked(marked, predicted, expected)
    return _diff_from(_match(predicted, expected, line_tolerance), predicted, expected)


def grade_and_diff(
    predicted: Sequence[Finding],
    expected: Sequence[Span],
    *,
    line_tolerance: int = 0,
    matching: Matching = DEFAULT_MATCHING,
) -> tuple[Grade, FindingsDiff]:
    """Both at the cost of one matching (for reports that show the score and the why)."""
    if _has_supporting(expected):
        marked = _match_marked(predicted, expected, line_tolerance, matching)
        return _grade_marked(marked), _diff_marked(marked, predicted, expected)
    m = _match(predicted, expected, line_tolerance, matching)
    return _grade_from(m), _diff_from(m, predicted, expected)
