"""How much the runner costs on top of the bare tools, on a large real corpus.

For each call: the bare tool with the runner's own argv, its JSON piped into `cat > /dev/null`
(a pipe, not a redirect: rg notices /dev/null and stops at the first match), against
`run_tool_call` returning Findings. Runs are interleaved, several repetitions, medians compared.
Also: the parser's throughput on the 100k+ match output, and the runner's peak RSS on that call
(measured in a child process).

    uv run python benchmarks/bench_runner.py [--reps N]

Prints a table and writes it to benchmarks/results/runner.md. Goals: <= 1.05x for calls with at
most 1000 matches; <= 1.8x and >= 1M matches/s parsed for the 100k+ call; peak RSS < 300 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from large_corpus import build_large_corpus, corpus_stats  # noqa: E402

from codesearch_core.argv import tool_argv  # noqa: E402
from codesearch_core.parsers import RipgrepParser  # noqa: E402
from codesearch_core.runner import run_tool_call  # noqa: E402
from codesearch_core.schemas import parse_tool_call  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "runner.md"
BIG_MATCHES = 100_000
SMALL_MATCHES = 1000
GOAL_SMALL = 1.05
GOAL_BIG = 1.8
GOAL_PARSE_PER_S = 1_000_000
GOAL_RSS_MB = 300


@dataclass(frozen=True)
class Case:
    label: str
    call: dict[str, Any]


CASES = [
    Case("rg literal", {"name": "ripgrep_search", "arguments": {"pattern": "Py_DECREF(", "fixed_strings": True}}),
    Case("rg regex", {"name": "ripgrep_search", "arguments": {"pattern": r"(?:def|class) \w*[Dd]eprecat\w*"}}),
    Case("rg PCRE2 look-behind", {"name": "ripgrep_search", "arguments": {"pattern": r"(?<=self\._)cache_\w+", "pcre2": True}}),
    Case("rg -t c", {"name": "ripgrep_search", "arguments": {"pattern": r"\bmalloc\(", "file_types": ["c"]}}),
    Case("rg few matches", {"name": "ripgrep_search", "arguments": {"pattern": r"PyUnicode_AsUTF8AndSize\b"}}),
    Case("rg 100k+ matches", {"name": "ripgrep_search", "arguments": {"pattern": r"\bclass\b"}}),
    Case("ast-grep python", {"name": "ast_grep_search", "arguments": {"pattern": "isinstance($X, dict)", "language": "python", "paths": ["site-packages-0/pandas/core"]}}),
    Case("ast-grep javascript", {"name": "ast_grep_search", "arguments": {"pattern": "$A.then($$$B)", "language": "javascript", "paths": ["site-packages-0/ray"]}}),
]  # fmt: skip


def _bare_seconds(argv: list[str], root: Path) -> float:
    started = time.perf_counter()
    subprocess.run(f"{shlex.join(argv)} | cat > /dev/null", shell=True, cwd=root, check=False)
    return time.perf_counter() - started


def _runner_seconds(case: Case, root: Path) -> tuple[float, int]:
    call = parse_tool_call(case.call)
    started = time.perf_counter()
    result = run_tool_call(call, root, timeout_s=600, max_findings=10_000_000)
    elapsed = time.perf_counter() - started
    if not result.ok or result.truncated:
        raise SystemExit(f"{case.label}: the runner failed: {result.error_kind} {result.error}")
    return elapsed, len(result.findings)


def _parse_rate(argv: list[str], root: Path, reps: int) -> tuple[int, float]:
    """Findings per CPU second of the parser alone, on captured output fed in pipe-sized chunks."""
    output = subprocess.run(argv, cwd=root, capture_output=True, check=False).stdout
    chunk = 256 * 1024
    best = float("inf")
    n = 0
    for _ in range(max(3, reps)):
        parser = RipgrepParser()
        started = time.process_time()
        n = 0
        for i in range(0, len(output), chunk):
            n += len(parser.feed(output[i : i + chunk]))
        n += len(parser.close())
        best = min(best, time.process_time() - started)
    return n, n / best


_RSS_CHILD = """
import json, sys
from pathlib import Path
from codesearch_core.runner import run_tool_call
from codesearch_core.schemas import parse_tool_call

def peak_kib():
    # VmHWM: this process's own peak RSS. (getrusage's ru_maxrss would carry over the parent's
    # peak across fork+exec.)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])

call = parse_tool_call(json.loads(sys.argv[1]))
before = peak_kib()
result = run_tool_call(call, Path(sys.argv[2]), timeout_s=600, max_findings=10_000_000)
assert result.ok and len(result.findings) > 0
print(before, peak_kib())
"""


def _peak_rss_mb(case: Case, root: Path) -> tuple[float, float]:
    """(peak RSS after imports, peak RSS after the call) of a fresh child process, in MB."""
    proc = subprocess.run(
        [sys.executable, "-c", _RSS_CHILD, json.dumps(case.call), str(root)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    before, after = (int(x) / 1024 for x in proc.stdout.split())
    return before, after


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()

    root = build_large_corpus()
    stats = corpus_stats()
    load_before = os.getloadavg()
    rows = []
    big: Case | None = None
    for case in CASES:
        argv = tool_argv(parse_tool_call(case.call), root)
        _bare_seconds(argv, root)  # warm the page cache and the tool
        bare, ours = [], []
        matches = 0
        for _ in range(args.reps):
            bare.append(_bare_seconds(argv, root))
            seconds, matches = _runner_seconds(case, root)
            ours.append(seconds)
        b, r = statistics.median(bare), statistics.median(ours)
        goal = GOAL_BIG if matches >= BIG_MATCHES else GOAL_SMALL if matches <= SMALL_MATCHES else None
        if matches >= BIG_MATCHES:
            big = case
        rows.append((case.label, matches, b, r, r / b, goal))
        print(f"{case.label:24} {matches:>8} matches  bare {b:7.3f} s  runner {r:7.3f} s  x{r / b:.2f}")

    lines = [
        "# Runner vs bare tools",
        "",
        f"Corpus: {stats['files']:,} files, {stats['bytes'] / 1e6:.0f} MB (benchmarks/large_corpus.py). "
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
        f"load average {load_before[0]:.1f} at start, {os.getloadavg()[0]:.1f} at end. "
        f"{args.reps} interleaved repetitions, medians of wall time.",
        "",
        "| call | matches | bare tool (s) | runner (s) | ratio | goal | met |",
        "|---|---:|---:|---:|---:|---:|:---:|",
    ]
    for label, matches, b, r, ratio, goal in rows:
        goal_text = f"<= {goal:.2f}x" if goal else "-"
        met = "-" if goal is None else ("yes" if ratio <= goal else "no")
        lines.append(f"| {label} | {matches:,} | {b:.3f} | {r:.3f} | {ratio:.2f}x | {goal_text} | {met} |")

    if big is not None:
        argv = tool_argv(parse_tool_call(big.call), root)
        n, rate = _parse_rate(argv, root, args.reps)
        runner_s = next(r for label, _, _, r, _, _ in rows if label == big.label)
        base_mb, peak_mb = _peak_rss_mb(big, root)
        lines += [
            "",
            f"Big call ({big.label}, {n:,} matches):",
            "",
            f"- parser alone: {rate / 1e6:.2f} M matches per CPU second "
            f"(goal >= {GOAL_PARSE_PER_S / 1e6:.0f} M/s: {'met' if rate >= GOAL_PARSE_PER_S else 'not met'})",
            f"- runner end to end: {n / runner_s / 1e6:.2f} M findings per wall second (rg's search included)",
            f"- peak RSS of the runner process: {peak_mb:.0f} MB ({base_mb:.0f} MB after imports; "
            f"goal < {GOAL_RSS_MB} MB: {'met' if peak_mb < GOAL_RSS_MB else 'not met'})",
        ]
    report = "\n".join(lines) + "\n"
    print()
    print(report)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(report)
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
