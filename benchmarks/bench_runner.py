"""How much the runner costs on top of the bare tools, on a large real corpus.

For each call: the bare tool with the runner's own argv, its JSON piped into `cat > /dev/null`
(a pipe, not a redirect: rg notices /dev/null and stops at the first match), against
`run_tool_call` returning Findings. Runs are interleaved, several repetitions, medians compared.
Also: the parser's throughput on the 100k+ match output, and the runner's peak RSS on that call
(measured in a child process).

    uv run python benchmarks/bench_runner.py [--reps N]

Prints a table and writes it to benchmarks/results/runner.md. Goals: <= 1.05x for calls with at
most 1000 matches; <= 1.8x and >= 1.1 M matches/s parsed (issue 16) for the 100k+ call; peak RSS < 300 MB.
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

from large_corpus import build_large_corpus, corpus_stats

from codesearch_core.tools.argv import tool_argv
from codesearch_core.tools.parsers import _RG_DECODER, RipgrepParser
from codesearch_core.tools.runner import run_tool_call
from codesearch_core.tools.schemas import parse_tool_call

RESULTS = Path(__file__).resolve().parent / "results" / "runner.md"
BIG_MATCHES = 100_000
SMALL_MATCHES = 1000
GOAL_SMALL = 1.05
GOAL_BIG = 1.8
GOAL_PARSE_PER_S = 1_100_000  # issue 16 (issue 6 asked for 1 M)
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


@dataclass(frozen=True)
class Sample:
    wall: float
    cpu: float  # user + sys of everything that ran: the tool (and cat), and the runner itself


def _cpu(before: os.times_result, after: os.times_result, *, own: bool) -> float:
    spent = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    if own:
        spent += (after.user - before.user) + (after.system - before.system)
    return spent


def _bare(argv: list[str], root: Path) -> Sample:
    t0, started = os.times(), time.perf_counter()
    subprocess.run(
        f"{shlex.join(argv)} | cat > /dev/null",
        shell=True,
        cwd=root,
        check=False,
        stderr=subprocess.DEVNULL,
    )
    return Sample(time.perf_counter() - started, _cpu(t0, os.times(), own=False))


def _runner(case: Case, root: Path) -> tuple[Sample, int, float]:
    """The sample, the number of findings, and the runner process's own CPU seconds."""
    call = parse_tool_call(case.call)
    t0, started = os.times(), time.perf_counter()
    result = run_tool_call(call, root, timeout_s=600, max_findings=10_000_000)
    wall, t1 = time.perf_counter() - started, os.times()
    if not result.ok or result.truncated:
        raise SystemExit(f"{case.label}: the runner failed: {result.error_kind} {result.error}")
    own = (t1.user - t0.user) + (t1.system - t0.system)
    return Sample(wall, _cpu(t0, t1, own=True)), len(result.findings), own


def _parse_rate(argv: list[str], root: Path, reps: int) -> tuple[int, float, float, int]:
    """Findings per CPU second of the parser alone, on captured output fed in pipe-sized chunks,
    set up as the runner sets it up for this call (no `-U`: `multiline=False`); and, for scale,
    findings per CPU second of msgspec alone decoding the same output into the parser's structs
    (the least any parser on msgspec can spend). Interleaved, best of each."""
    output = subprocess.run(argv, cwd=root, capture_output=True, check=False).stdout
    size = 256 * 1024
    chunks = [output[i : i + size] for i in range(0, len(output), size)]  # sliced once, untimed
    # The same pieces for msgspec alone, but cut after a newline: decoding needs whole lines.
    whole_lines, at = [], 0
    while at < len(output):
        end = output.rfind(b"\n", at, at + size) + 1 or output.find(b"\n", at) + 1 or len(output)
        whole_lines.append(output[at:end])
        at = end
    best = best_decode = float("inf")
    n = 0
    for _ in range(max(5, reps)):
        parser = RipgrepParser(multiline=False)
        started = time.process_time()
        n = 0
        for chunk in chunks:
            n += len(parser.feed(chunk))
        n += len(parser.close())
        best = min(best, time.process_time() - started)
        started = time.process_time()
        for lines in whole_lines:
            _RG_DECODER.decode_lines(lines)
        best_decode = min(best_decode, time.process_time() - started)
    return n, n / best, n / best_decode, len(output)


_RSS_CHILD = """
import json, sys
from pathlib import Path
from codesearch_core.tools.runner import run_tool_call
from codesearch_core.tools.schemas import parse_tool_call

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


@dataclass(frozen=True)
class Row:
    label: str
    matches: int
    bare: list[Sample]
    ours: list[Sample]
    own_cpu: float  # median CPU seconds of the runner process itself

    @property
    def goal(self) -> float | None:
        if self.matches >= BIG_MATCHES:
            return GOAL_BIG
        return GOAL_SMALL if self.matches <= SMALL_MATCHES else None

    def median(self, which: str, field: str) -> float:
        return float(statistics.median(getattr(s, field) for s in getattr(self, which)))

    def best(self, which: str) -> float:
        return float(min(s.wall for s in getattr(self, which)))

    @property
    def ratio(self) -> float:
        return self.median("ours", "wall") / self.median("bare", "wall")

    @property
    def best_ratio(self) -> float:
        return self.best("ours") / self.best("bare")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()

    root = build_large_corpus()
    stats = corpus_stats()
    load_before = os.getloadavg()
    rows: list[Row] = []
    for case in CASES:
        argv = tool_argv(parse_tool_call(case.call), root)
        _bare(argv, root)  # warm the page cache and the tool
        bare: list[Sample] = []
        ours: list[Sample] = []
        own: list[float] = []
        matches = 0
        for _ in range(args.reps):
            bare.append(_bare(argv, root))
            sample, matches, own_cpu = _runner(case, root)
            ours.append(sample)
            own.append(own_cpu)
        row = Row(case.label, matches, bare, ours, statistics.median(own))
        rows.append(row)
        print(
            f"{case.label:22} {matches:>8} matches  bare {row.median('bare', 'wall'):6.3f} s  "
            f"runner {row.median('ours', 'wall'):6.3f} s  x{row.ratio:.2f} (best-of x{row.best_ratio:.2f})"
        )

    lines = [
        "# Runner vs bare tools",
        "",
        f"Corpus: {stats['files']:,} files, {stats['bytes'] / 1e6:.0f} MB (benchmarks/large_corpus.py). "
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
        f"load average {load_before[0]:.1f} at start, {os.getloadavg()[0]:.1f} at end "
        "(a shared machine: other work competes for the CPUs, so best-of and CPU columns are "
        "given beside the medians). "
        f"{args.reps} interleaved repetitions. Bare tool: the runner's argv, JSON piped into "
        "`cat > /dev/null`. CPU: user+sys of everything that ran (tool, cat / runner process).",
        "",
        "| call | matches | bare median (s) | runner median (s) | ratio | best-of ratio | "
        "bare CPU (s) | runner CPU (s) | goal | met (median) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|:---:|",
    ]
    for row in rows:
        goal_text = f"<= {row.goal:.2f}x" if row.goal else "-"
        met = "-" if row.goal is None else ("yes" if row.ratio <= row.goal else "no")
        lines.append(
            f"| {row.label} | {row.matches:,} | {row.median('bare', 'wall'):.3f} | "
            f"{row.median('ours', 'wall'):.3f} | {row.ratio:.2f}x | {row.best_ratio:.2f}x | "
            f"{row.median('bare', 'cpu'):.3f} | {row.median('ours', 'cpu'):.3f} | {goal_text} | {met} |"
        )

    big = next((r for r in rows if r.matches >= BIG_MATCHES), None)
    if big is not None:
        case = next(c for c in CASES if c.label == big.label)
        argv = tool_argv(parse_tool_call(case.call), root)
        n, rate, decode_rate, output_bytes = _parse_rate(argv, root, args.reps)
        len_mb = output_bytes / 1e6
        base_mb, peak_mb = _peak_rss_mb(case, root)
        lines += [
            "",
            f"Big call ({big.label}, {n:,} matches):",
            "",
            f"- parser alone (captured output fed in 256 KiB chunks, as the runner sets it up): "
            f"{rate / 1e6:.2f} M matches per CPU second (goal >= {GOAL_PARSE_PER_S / 1e6:.1f} M/s: "
            f"{'met' if rate >= GOAL_PARSE_PER_S else 'not met'}); msgspec alone, decoding the "
            f"same {len_mb:.0f} MB into the parser's structs: {decode_rate / 1e6:.2f} M/s",
            f"- runner process, everything included (spawn, reads, parse, sort): "
            f"{big.own_cpu:.3f} CPU s = {n / big.own_cpu / 1e6:.2f} M findings per CPU second",
            f"- end to end: {n / big.median('ours', 'wall') / 1e6:.2f} M findings per wall second "
            "(rg's search of the whole corpus included)",
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
