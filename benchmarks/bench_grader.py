"""How fast grading is: a million predicted findings against a million expected spans.

Run: `uv run python benchmarks/bench_grader.py [--n 1000000] [--files 50000]`.

The synthetic answer looks like a model's output: most spans exact, some shifted a line, some
missing, some extra, some multi-line, a few submatches on one line. Prints the time of `grade` (the
target is under 1 s for 1M x 1M; by coverage credit, and by the overlap rule for comparison), of `grade` with a line tolerance, of `diff_findings`, and the ratio
against the bare baseline measured in the same run: exact-span set intersection in plain Python, which
is the least any span grader must do (and which gets no tolerance and no one-to-one matching).
"""

from __future__ import annotations

import argparse
import gc
import random
import time
from collections.abc import Callable
from typing import TypeVar

from codesearch_core.grading.spans import Matching, diff_findings, grade
from codesearch_core.models import Finding, Span

T = TypeVar("T")


def timed(fn: Callable[[], T], repeat: int = 3) -> tuple[float, T]:
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    assert result is not None
    return best, result


def synthetic(n: int, n_files: int, seed: int = 0) -> tuple[list[Finding], list[Span]]:
    """`n` expected spans and `n` predicted findings over `n_files` files."""
    rnd = random.Random(seed)
    paths = [f"src/module_{i // 100:04d}/file_{i:06d}.py" for i in range(n_files)]
    expected: list[Span] = []
    predicted: list[Finding] = []
    for i in range(n):
        path = paths[i % n_files]
        start = 1 + (i // n_files) * 7
        end = start + (3 if rnd.random() < 0.1 else 0)  # some multi-line spans
        expected.append(Span(path, start, end))
        r = rnd.random()
        if r < 0.05:
            continue  # missed
        if r < 0.15:
            start, end = start + 1, end + 1  # off by one line
        if r > 0.98:
            predicted.append(Finding(path, start, 20, end, 29, 0, 8, "submatch"))
        predicted.append(Finding(path, start, 1, end, 9, 0, 8, "hit"))
    while len(predicted) < n:  # extras: lines no expected span is near
        path = paths[rnd.randrange(n_files)]
        line = 10_000 + rnd.randrange(1000)
        predicted.append(Finding(path, line, 1, line, 9, 0, 8, "extra"))
    return predicted[:n], expected


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=50_000)
    args = parser.parse_args()

    predicted, expected = synthetic(args.n, args.files)
    print(f"{len(predicted):,} predicted vs {len(expected):,} expected over {args.files:,} files")

    def baseline() -> int:
        p = {(f.path, f.start_line, f.end_line) for f in predicted}
        e = {(s.path, s.start_line, s.end_line) for s in expected}
        return len(p & e)

    t_base, exact = timed(baseline)
    t_grade, g = timed(lambda: grade(predicted, expected))
    t_tol, g_tol = timed(lambda: grade(predicted, expected, line_tolerance=1))
    t_overlap, g_overlap = timed(lambda: grade(predicted, expected, matching=Matching.OVERLAP))
    t_diff, d = timed(lambda: diff_findings(predicted, expected), repeat=1)

    print(f"baseline exact set intersection: {t_base:.3f} s ({exact:,} exact)")
    print(
        f"grade, coverage (tolerance 0):   {t_grade:.3f} s  ratio {t_grade / t_base:.2f}x  "
        f"f1={g.span_f1:.4f} iou={g.file_iou:.4f} matched={g.n_matched:,}"
    )
    print(
        f"grade, overlap rule (tol 0):     {t_overlap:.3f} s  ratio {t_overlap / t_base:.2f}x  "
        f"f1={g_overlap.span_f1:.4f} (coverage credit costs {t_grade / t_overlap:.2f}x)"
    )
    print(
        f"grade (tolerance 1):             {t_tol:.3f} s  ratio {t_tol / t_base:.2f}x  "
        f"f1={g_tol.span_f1:.4f} matched={g_tol.n_matched:,}"
    )
    print(
        f"diff_findings (tolerance 0):     {t_diff:.3f} s  ratio {t_diff / t_base:.2f}x  "
        f"hits={len(d.hits):,} misses={len(d.misses):,} extras={len(d.extras):,}"
    )
    verdict = "OK" if t_grade < 1.0 else "SLOWER THAN TARGET"
    print(f"target: grade 1M x 1M under 1 s -> {verdict}")


if __name__ == "__main__":
    main()
