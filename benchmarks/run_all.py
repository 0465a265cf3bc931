"""The speed benchmarks that fit in about ten minutes on 2 cores, each figure beside its goal and
its last recorded value: run it before a change lands, and again after.

Run: `uv run python benchmarks/run_all.py [--only NAME ...] [--save] [--no-save] [--list]`.

Runs each benchmark of `BENCHMARKS` (its own script, in its own process, with `--no-save`: the
recorded results stay as they were) one after the other, reads the figures from what it prints,
and compares each with the same figure in the benchmark's results file (`results/<name>.md`, its
last recorded run) or, for a benchmark that writes none (the grader), with the figure of the last
run of this script (`results/run_all.json`). A figure more than 20% worse than its last value is
flagged (`WORSE`); the table also says whether each figure meets its goal. Prints the table and writes it to
`results/run_all.md` (and this run's figures to `results/run_all.json`); `--no-save` writes
neither, `--save` also lets every benchmark write its own results file (new last values).

Exit status: 0 nothing flagged, 1 a figure flagged or a benchmark failed or printed no figure,
2 bad arguments.

Left out, as too slow for ten minutes or needing what a fresh checkout lacks: the runner and the
Corpus page (the 400 MB to 1 GB corpora), the data set build (13 min), synthesis of the large
corpus, the browser benchmarks when Debian's Chromium is absent (otherwise they run), and the vLLM
ones. A busy machine skews every figure: the load average is printed and written with the table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
REPORT = RESULTS / "run_all.md"
LAST_RUN = RESULTS / "run_all.json"
CHROMIUM = Path("/usr/bin/chromium")
#: How much worse than its last value a figure may get before it is flagged.
TOLERANCE = 0.20
NUMBER = r"([0-9][0-9,]*(?:\.[0-9]+)?)"


@dataclass(frozen=True, slots=True)
class Figure:
    """One figure: `pattern`'s first group in the benchmark's output (and in its results file).
    `goal` is a bound in the figure's unit (None: none stated); `lower` says lower is better."""

    name: str
    pattern: str
    unit: str
    goal: float | None
    lower: bool = True

    def read(self, text: str) -> float | None:
        found = re.search(self.pattern, text, re.MULTILINE)
        return None if found is None else float(found.group(1).replace(",", ""))

    def goal_text(self) -> str:
        if self.goal is None:
            return "-"
        return f"{'<=' if self.lower else '>='} {self.goal:g} {self.unit}".strip()

    def meets_goal(self, value: float) -> bool:
        if self.goal is None:
            return True
        return value <= self.goal if self.lower else value >= self.goal

    def worse(self, now: float, last: float) -> bool:
        """More than `TOLERANCE` worse than `last`."""
        if self.lower:
            return now > last * (1 + TOLERANCE)
        return now < last * (1 - TOLERANCE)


@dataclass(frozen=True, slots=True)
class Benchmark:
    name: str  # `benchmarks/bench_<name>.py`, `results/<name>.md`
    args: tuple[str, ...]
    figures: tuple[Figure, ...]
    has_results: bool = True  # writes results/<name>.md, and takes --no-save
    timeout_s: int = 240
    missing: Callable[[], str | None] = lambda: None  # why it cannot run here, if it cannot

    @property
    def script(self) -> Path:
        return REPO / "benchmarks" / f"bench_{self.name}.py"

    @property
    def results(self) -> Path:
        return RESULTS / f"{self.name}.md"


def _row(label: str, column: int) -> str:
    """The number in the `column`-th cell (1 = the first after the label) of a Markdown row."""
    cells = r"[^|\n]*\|" * (column - 1)
    return rf"^\|\s*{label}\s*\|{cells}\s*{NUMBER}"


def _no_chromium() -> str | None:
    return None if CHROMIUM.exists() else f"needs Debian's Chromium at {CHROMIUM}"


BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark(
        "cold_start",
        ("--repeat", "10"),
        (
            Figure("`codesearch --help`, median", _row(r"`codesearch --help`", 1), "s", 0.3),
            Figure(
                "`codesearch run`, median", _row(r"`codesearch run \(ledger, rg\)`", 1), "s", 0.5
            ),
        ),
    ),
    Benchmark(
        "grader",
        (),
        (
            Figure(
                "grade 1M x 1M (coverage)",
                rf"^grade, coverage \(tolerance 0\):\s*{NUMBER} s",
                "s",
                1.0,
            ),
        ),
        has_results=False,
    ),
    Benchmark(
        "seed_calls",
        ("--reps", "5"),
        (
            Figure("seed calls, rg / bare (median)", _row("ripgrep_search", 3), "x", 1.05),
            Figure("seed calls, ast-grep / bare (median)", _row("ast_grep_search", 3), "x", 1.05),
        ),
    ),
    Benchmark(
        "reward",
        (),
        (
            Figure(
                "reward, distinct (own pool)",
                _row(r"distinct, \d+ threads", 3),
                "completions/s",
                200,
                lower=False,
            ),
            Figure(
                "reward, grpo (own pool)",
                _row(r"grpo, \d+ threads", 3),
                "completions/s",
                200,
                lower=False,
            ),
        ),
    ),
    Benchmark(
        "gym",
        ("--reps", "5", "--rounds", "2"),
        (
            Figure("gym step / bare tool (median)", _row(r"\d+", 2), "x", 1.1),
            Figure(
                "gym reference policy, shipped corpora",
                _row("shipped corpora", 2),
                "calls/s",
                200,
                lower=False,
            ),
        ),
    ),
    Benchmark(
        "trajectory",
        ("--reps", "10"),
        (Figure("trajectory view, build and draw", _row(r"build and draw it[^|]*", 1), "ms", 500),),
    ),
    Benchmark(
        "store",
        ("--repeat", "11"),
        (
            Figure("store: next undecided item", _row("next undecided item", 1), "ms", 20),
            Figure(
                "store: next item, new reviewer, leased",
                _row("next item of a new reviewer, leased", 1),
                "ms",
                20,
            ),
            Figure("store: dashboard_stats()", _row(r"dashboard_stats\(\)", 1), "ms", 100),
            Figure(
                "store: xLAM export of 100k",
                _row(r"xLAM export of 100,000 accepted items", 1),
                "ms",
                5000,
            ),
        ),
        timeout_s=300,
    ),
    Benchmark(
        "verify",
        ("--n", "1000", "--repeat", "2"),
        (
            Figure(
                "verify, speed-up with all workers",
                r"^- `codesearch verify` speed-up with \d+ workers: " + NUMBER + "x",
                "x",
                1.8,
                lower=False,
            ),
            Figure(
                "verify / bare tools, calls/s",
                r"against the bare tools in \d+ threads: " + NUMBER + "x",
                "x",
                0.85,
                lower=False,
            ),
        ),
    ),
    Benchmark(
        "long_lines",
        ("--sizes", "50", "--repeat", "3"),
        (Figure("50 MB line, the corpus / bare", _row(r"50 MB", 5), "x", 1.3),),
    ),
    Benchmark(
        "gym_server",
        ("--reps", "1", "--steps", "2", "--rounds", "1"),
        (
            Figure(
                "gym server overhead, one search",
                _row(r"the reference call \(one search\)", 4),
                "ms",
                5,
            ),
            Figure(
                "gym server overhead, no search", _row(r"no search \(an unknown tool\)", 4), "ms", 5
            ),
            Figure(
                "gym server plain-HTTP session overhead, no search",
                _row(r"plain HTTP session: no search \(an unknown tool\)", 4),
                "ms",
                5,
            ),
        ),
        timeout_s=420,
    ),
    Benchmark(
        "review_browser",
        ("--presses", "15"),
        (
            Figure(
                "accept key to next card (Chromium)",
                _row("key press to next card, Chromium", 1),
                "ms",
                300,
            ),
        ),
        missing=_no_chromium,
        timeout_s=300,
    ),
    Benchmark(
        "episode_card",
        ("--presses", "15"),
        (
            Figure(
                "accept key to next episode card (Chromium)",
                _row("key press to next episode card, Chromium", 1),
                "ms",
                300,
            ),
        ),
        missing=_no_chromium,
        timeout_s=300,
    ),
)


@dataclass(frozen=True, slots=True)
class Row:
    figure: Figure
    last: float | None
    now: float | None

    @property
    def flag(self) -> str:
        if self.now is None:
            return "NO FIGURE"
        if self.last is not None and self.figure.worse(self.now, self.last):
            return f"WORSE (>{TOLERANCE:.0%})"
        return ""

    @property
    def met(self) -> str:
        if self.now is None or self.figure.goal is None:
            return "-"
        return "yes" if self.figure.meets_goal(self.now) else "no"


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.3f}" if abs(value) < 10 else f"{value:,.1f}"


def last_values(bench: Benchmark, last_run: dict[str, float]) -> dict[str, float | None]:
    if bench.has_results and bench.results.is_file():
        text = bench.results.read_text(encoding="utf-8")
        return {f.name: f.read(text) for f in bench.figures}
    return {f.name: last_run.get(f.name) for f in bench.figures}


def run(bench: Benchmark, save: bool) -> tuple[str, float, str | None]:
    """The benchmark's output, its seconds, and why it failed (None when it did not)."""
    argv = [sys.executable, str(bench.script), *bench.args]
    if bench.has_results and not save:
        argv.append("--no-save")
    started = time.perf_counter()
    try:
        done = subprocess.run(
            argv, cwd=REPO, capture_output=True, text=True, timeout=bench.timeout_s, check=False
        )
    except subprocess.TimeoutExpired:
        return "", time.perf_counter() - started, f"stopped after {bench.timeout_s} s"
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        return done.stdout, seconds, f"exit status {done.returncode}: {tail}"
    return done.stdout, seconds, None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these benchmarks only")
    parser.add_argument("--save", action="store_true", help="let each benchmark write its results")
    parser.add_argument("--no-save", action="store_true", help="write neither run_all.md nor .json")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and stop")
    parser.add_argument("--note", default="", help="a line written under the table")
    args = parser.parse_args()
    if args.list:
        for bench in BENCHMARKS:
            reason = bench.missing()
            print(
                f"{bench.name}: {len(bench.figures)} figures" + (f" ({reason})" if reason else "")
            )
        return 0
    names = {b.name for b in BENCHMARKS}
    unknown = set(args.only or ()) - names
    if unknown:
        parser.error(f"unknown benchmarks {sorted(unknown)}; known: {sorted(names)}")
    chosen = [b for b in BENCHMARKS if not args.only or b.name in args.only]
    last_run: dict[str, float] = {}
    if LAST_RUN.is_file():
        last_run = json.loads(LAST_RUN.read_text(encoding="utf-8")).get("figures", {})

    load_start, started = os.getloadavg()[0], time.perf_counter()
    rows: list[Row] = []
    notes: list[str] = []
    failures = 0
    for bench in chosen:
        reason = bench.missing()
        if reason is not None:
            notes.append(f"- `{bench.name}`: skipped, {reason}")
            print(f"{bench.name}: skipped ({reason})", file=sys.stderr)
            continue
        last = last_values(bench, last_run)
        print(f"{bench.name}: running...", file=sys.stderr, flush=True)
        out, seconds, failed = run(bench, args.save)
        load = os.getloadavg()[0]
        failures += failed is not None
        where = bench.results.name if bench.has_results else LAST_RUN.name
        notes.append(
            f"- `{bench.name}` ({' '.join(bench.args) or 'defaults'}): {seconds:.0f} s, load "
            f"{load:.1f} after; last values from `{where}`"
            + (f"; FAILED, {failed}" if failed else "")
        )
        print(
            f"{bench.name}: {seconds:.0f} s" + (f", FAILED ({failed})" if failed else ""),
            file=sys.stderr,
        )
        rows += [Row(f, last[f.name], None if failed else f.read(out)) for f in bench.figures]
    total = time.perf_counter() - started

    lines = [
        "# All fast benchmarks, against their goals and last values",
        "",
        f"`uv run python benchmarks/run_all.py` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC: "
        f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; load "
        f"average {load_start:.1f} at start, {os.getloadavg()[0]:.1f} at end; {total:.0f} s in all. "
        f"Flagged: a figure more than {TOLERANCE:.0%} worse than its last recorded value.",
        "",
        "| figure | goal | last | now | change | goal met | flag |",
        "|---|---:|---:|---:|---:|:---:|---|",
    ]
    for row in rows:
        change = "-"
        if row.now is not None and row.last:
            change = f"{(row.now / row.last - 1):+.0%}"
        unit = f" {row.figure.unit}"
        lines.append(
            f"| {row.figure.name} | {row.figure.goal_text()} | {_number(row.last)}{unit} | "
            f"{_number(row.now)}{unit} | {change} | {row.met} | {row.flag} |"
        )
    lines += ["", "Runs:", "", *notes]
    if args.note:
        lines += ["", args.note]
    report = "\n".join(lines) + "\n"
    print(report)
    if not args.no_save:
        REPORT.write_text(report, encoding="utf-8")
        figures = {**last_run, **{r.figure.name: r.now for r in rows if r.now is not None}}
        saved = {"written": f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC", "figures": figures}
        LAST_RUN.write_text(json.dumps(saved, indent=2) + "\n", encoding="utf-8")
    return 1 if failures or any(r.flag for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
