"""The grade of a small answer in plain Python, and the parts both grading paths share.

`spans.grade` vectorizes with numpy, which pays ~30 array operations of a few microseconds each
whatever the input: ~0.5 ms for a call that found three lines, more than the rest of grading it. A
verification run grades thousands of such calls, so below `SMALL_GRADE_SPANS` spans `grade` takes
this path instead: the same steps on lists (distinct spans, clusters, one-to-one matching, credit),
in the same order, so that it returns the very same floats. `tests/grading/test_small_grade.py`
checks that on random inputs against the numpy path.

Also here, so that `spans` can use them without an import cycle: the greedy interval matching of a
crowded cluster, numpy's summation order, and the scores from a matching's totals.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Final

from codesearch_core.models import Finding, Grade, Span

#: Up to this many spans (predicted + expected) `spans.grade` uses `grade_small`. Measured on this
#: project's 2-core machine: equal speed at ~400 spans; 3 spans take ~15 us here against ~450 us.
SMALL_GRADE_SPANS: Final = 256


def greedy_pairs(
    predicted: list[tuple[int, int, int]], expected: list[tuple[int, int, int]], tol: int
) -> list[tuple[int, int]]:
    """Maximum one-to-one matching of (start, end, id) intervals within `tol` lines of each other.

    Expected intervals are taken by increasing end; each takes, among the predicted intervals that
    start early enough to reach it, the one that ends first but still reaches it. Any predicted
    interval that starts early enough for this expected one does so for every later one too, and the
    one ending first is the least useful to the rest, so an exchange argument makes this optimal.
    """
    by_start = sorted(predicted)
    available: list[tuple[int, int, int]] = []  # (end, start, id), sorted
    pairs: list[tuple[int, int]] = []
    j = 0
    for e_start, e_end, e_id in sorted(expected, key=lambda x: (x[1], x[0], x[2])):
        while j < len(by_start) and by_start[j][0] <= e_end + tol:
            p_start, p_end, p_id = by_start[j]
            bisect.insort(available, (p_end, p_start, p_id))
            j += 1
        k = bisect.bisect_left(available, (e_start - tol,))
        if k < len(available):
            pairs.append((available.pop(k)[2], e_id))
    return pairs


def cluster_pairs(
    predicted: list[tuple[int, int, int]], expected: list[tuple[int, int, int]], tol: int
) -> list[tuple[int, int]]:
    """`greedy_pairs`, but pairing identical spans first whenever that loses no pair."""
    best = greedy_pairs(predicted, expected, tol)
    exact_keys = {(s, e) for s, e, _ in predicted} & {(s, e) for s, e, _ in expected}
    if not exact_keys:
        return best
    p_by_key = {(s, e): i for s, e, i in predicted if (s, e) in exact_keys}
    e_by_key = {(s, e): i for s, e, i in expected if (s, e) in exact_keys}
    exact = [(p_by_key[k], e_by_key[k]) for k in sorted(exact_keys)]
    rest = greedy_pairs(
        [x for x in predicted if (x[0], x[1]) not in exact_keys],
        [x for x in expected if (x[0], x[1]) not in exact_keys],
        tol,
    )
    return exact + rest if len(exact) + len(rest) == len(best) else best


def numpy_sum(values: Sequence[float], lo: int = 0, n: int | None = None) -> float:
    """`float(np.array(values).sum())`, bit for bit: numpy adds float64 pairwise, in blocks of 8
    (its `pairwise_sum`), so a plain left-to-right sum can differ in the last bit."""
    if n is None:
        n = len(values)
    if n < 8:
        total = 0.0
        for i in range(lo, lo + n):
            total += values[i]
        return total
    if n <= 128:
        r = list(values[lo : lo + 8])
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] += values[lo + i + j]
            i += 8
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for k in range(lo + i, lo + n):
            total += values[k]
        return total
    half = n // 2
    half -= half % 8
    return numpy_sum(values, lo, half) + numpy_sum(values, lo + half, n - half)


def ratio(num: float, den: float, *, both_empty: bool) -> float:
    if den == 0:
        return 1.0 if both_empty else 0.0
    return num / den


def scores(n_pred: int, n_exp: int, matched: int, credit: float, file_iou: float) -> Grade:
    """The Grade of a matching, from its totals (see `spans` for the definitions)."""
    both_empty = n_pred == 0 and n_exp == 0
    precision = ratio(credit, n_pred, both_empty=both_empty)
    recall = ratio(credit, n_exp, both_empty=both_empty)
    f1 = ratio(2 * precision * recall, precision + recall, both_empty=both_empty)
    return Grade(
        file_iou=file_iou,
        span_precision=precision,
        span_recall=recall,
        span_f1=f1,
        n_predicted=n_pred,
        n_expected=n_exp,
        n_matched=matched,
    )


def _iou(p_start: int, p_end: int, e_start: int, e_end: int, extra: int) -> float:
    inter = max(0, min(p_end, e_end) - max(p_start, e_start) + extra)
    union = (p_end - p_start + extra) + (e_end - e_start + extra) - inter
    if union > 0:
        return inter / union
    return 1.0 if p_start == e_start and p_end == e_end else 0.0


def _distinct(starts: list[int], ends: list[int]) -> list[int]:
    """Index of the first occurrence of each distinct (start, end), in (start, end) order."""
    seen: dict[tuple[int, int], int] = {}
    for i, key in enumerate(zip(starts, ends, strict=True)):
        seen.setdefault(key, i)
    return [seen[key] for key in sorted(seen)]


def grade_small(
    predicted: Sequence[Finding | Span],
    expected: Sequence[Span | Finding],
    tol: int,
    *,
    overlap: bool,
) -> Grade:
    """`spans.grade` (tolerance `tol`; `overlap`: every pair earns 1), step by step as `spans._match`
    does it with arrays, so the floats come out the same. The caller has checked `tol >= 0`."""
    path_ids: dict[str, int] = {}
    p_id = [path_ids.setdefault(x.path, len(path_ids)) for x in predicted]
    e_id = [path_ids.setdefault(x.path, len(path_ids)) for x in expected]
    p_start = [x.start_line for x in predicted]
    p_end = [x.end_line for x in predicted]
    e_start = [x.start_line for x in expected]
    e_end = [x.end_line for x in expected]
    for name, starts, ends in (("predicted", p_start, p_end), ("expected", e_start, e_end)):
        if starts and (min(starts) < 1 or any(e < s for s, e in zip(starts, ends, strict=True))):
            raise ValueError(f"{name} spans need 1 <= start_line <= end_line")
    in_p, in_e = set(p_id), set(e_id)
    either = len(in_p | in_e)
    file_iou = len(in_p & in_e) / either if either else 1.0

    # As in `spans._match`: lines of different files far apart on one axis.
    stride = max(max(p_end, default=0), max(e_end, default=0)) + tol + 2
    if (len(predicted) + len(expected) + 1) * stride >= 2**62:
        raise ValueError("line numbers too large to grade")
    p_start = [s + i * stride for s, i in zip(p_start, p_id, strict=True)]
    p_end = [e + i * stride for e, i in zip(p_end, p_id, strict=True)]
    e_start = [s + i * stride for s, i in zip(e_start, e_id, strict=True)]
    e_end = [e + i * stride for e, i in zip(e_end, e_id, strict=True)]
    p_distinct = _distinct(p_start, p_end)
    e_distinct = _distinct(e_start, e_end)
    if not p_distinct or not e_distinct:
        return scores(len(p_distinct), len(e_distinct), 0, 0.0, file_iou)

    rows = sorted(
        [(p_start[i], p_end[i], 0, i) for i in p_distinct]
        + [(e_start[i], e_end[i], 1, i) for i in e_distinct]
    )
    clusters: list[list[tuple[int, int, int, int]]] = []
    reach = 0
    for row in rows:
        if not clusters or row[0] > reach + tol:
            clusters.append([row])
            reach = row[1]
        else:
            clusters[-1].append(row)
            reach = max(reach, row[1])
    pairs: list[tuple[int, int]] = []
    crowded: list[tuple[int, int]] = []
    for members in clusters:
        n_exp = sum(row[2] for row in members)
        n_pred = len(members) - n_exp
        if n_pred == 1 and n_exp == 1:
            first, second = members
            pairs.append((first[3], second[3]) if first[2] == 0 else (second[3], first[3]))
        elif n_pred and n_exp:
            preds = [(s, e, o) for s, e, side, o in members if not side]
            exps = [(s, e, o) for s, e, side, o in members if side]
            crowded += cluster_pairs(preds, exps, tol)
    pairs += crowded  # numpy's order: all the single pairs first, then the crowded clusters
    if overlap or not pairs:
        credit = float(len(pairs))
    else:
        p_bytes = _byte_ranges(predicted)
        e_bytes = _byte_ranges(expected)
        if p_bytes is not None and e_bytes is not None:
            credits = [
                _iou(p_bytes[p][0], p_bytes[p][1], e_bytes[e][0], e_bytes[e][1], 0)
                for p, e in pairs
            ]
        else:
            credits = [_iou(p_start[p], p_end[p], e_start[e], e_end[e], 1) for p, e in pairs]
        credit = numpy_sum(credits)
    return scores(len(p_distinct), len(e_distinct), len(pairs), credit, file_iou)


def _byte_ranges(items: Sequence[Finding | Span]) -> list[tuple[int, int]] | None:
    ranges = []
    for x in items:
        if not isinstance(x, Finding):
            return None
        ranges.append((x.byte_start, x.byte_end))
    return ranges or None
