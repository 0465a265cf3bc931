"""The Corpus page and its searches on a large real corpus: the installed site-packages.

Adds this venv's `site-packages` (about 17,000 files, 1 GB here) as a pinned corpus in a temporary
corpora folder, then measures:
- adding it (copy + hash), checking it against its manifest (full hash, then the cached re-check);
- the Corpus page in Streamlit's AppTest: the first render and a rerun (median of `--reps`);
- a search over the whole corpus from the page's runner settings against the bare tool with the
  runner's own argv, its output read whole through a pipe, interleaved (goal: <= 1.2x).

    uv run python benchmarks/bench_corpus_page.py [--reps N] [--no-save]

Writes benchmarks/results/corpus_page.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import streamlit as st  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from codesearch_core.corpora import add_corpus, check_corpus, corpus_root  # noqa: E402
from codesearch_core.tools import parse_tool_call, run_tool_call  # noqa: E402
from codesearch_core.tools.argv import tool_argv  # noqa: E402

GOAL_SEARCH = 1.2
APP = REPO / "app.py"
#: The Corpus page's own limits on an ad-hoc search (pages/corpus.py).
ADHOC_TIMEOUT_S = 10.0
ADHOC_MAX_FINDINGS = 2000
SEARCHES = {
    "rg: a rare identifier": {
        "name": "ripgrep_search",
        "arguments": {"pattern": r"def __class_getitem__", "file_types": ["py"]},
    },
    "rg: PCRE2 look-behind": {
        "name": "ripgrep_search",
        "arguments": {"pattern": r"(?<=raise )NotImplementedError\(\"", "pcre2": True},
    },
    # ast-grep parses every Python file it searches: a package, not all 1 GB, within the page's
    # 10 s limit.
    "ast-grep: a call pattern in pip/": {
        "name": "ast_grep_search",
        "arguments": {
            "pattern": "warnings.warn($$$ARGS)",
            "language": "python",
            "paths": ["pip"],
        },
    },
}


def _timed(fn: object) -> float:
    started = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - started


def page_ms(reps: int) -> tuple[float, float]:
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.session_state["corpus"] = "site-packages"
    at.run()  # the Overview: opens (and seeds) the store, as a user's first page does
    at.switch_page("pages/corpus.py")
    first = _timed(at.run) * 1000
    assert not at.exception, at.exception
    reruns = [_timed(at.run) * 1000 for _ in range(reps)]
    return first, statistics.median(reruns)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument(
        "--source", type=Path, default=Path(sysconfig.get_paths()["purelib"]),
        help="the folder to add as the corpus (default: this venv's site-packages)",
    )  # fmt: skip
    args = ap.parse_args()
    site = args.source
    with tempfile.TemporaryDirectory(prefix="bench-corpus-") as tmp:
        os.environ["CODESEARCH_CORPORA"] = str(Path(tmp) / "corpora")
        os.environ["CODESEARCH_DB"] = str(Path(tmp) / "studio.duckdb")
        load_before = os.getloadavg()[0]
        started = time.perf_counter()
        manifest = add_corpus("site-packages", str(site)).manifest
        add_s = time.perf_counter() - started
        full_check_s = _timed(lambda: check_corpus("site-packages", full=True))
        quick_check_ms = _timed(lambda: check_corpus("site-packages")) * 1000
        cached_check_ms = _timed(lambda: check_corpus("site-packages")) * 1000
        first_ms, rerun_ms = page_ms(args.reps)
        root = corpus_root("site-packages")
        rows = []
        for label, raw in SEARCHES.items():
            call = parse_tool_call(raw)
            argv = tool_argv(call, root)
            bare: list[float] = []
            ours: list[float] = []
            found = 0
            for _ in range(args.reps):
                bare.append(
                    _timed(
                        lambda argv=argv: subprocess.run(
                            argv, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            check=False,
                        )
                    )
                )  # fmt: skip
                started = time.perf_counter()
                result = run_tool_call(
                    call, root, timeout_s=ADHOC_TIMEOUT_S, max_findings=ADHOC_MAX_FINDINGS
                )
                ours.append(time.perf_counter() - started)
                found = len(result.findings) if result.ok else -1  # -1: the run failed
            b, o = statistics.median(bare), statistics.median(ours)
            rows.append((label, found, b * 1000, o * 1000, o / b))
    mb = manifest.total_bytes / 1e6
    lines = [
        "# The Corpus page on a large real corpus",
        "",
        f"`{site.name}` as a corpus: {len(manifest.files):,} files, {mb:,.0f} MB. "
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; load average {load_before:.1f} at start, "
        f"{os.getloadavg()[0]:.1f} at end; {args.reps} repetitions.",
        "",
        "| step | time |",
        "|---|---:|",
        f"| `corpus add` (copy + hash) | {add_s:.1f} s ({mb / add_s:,.0f} MB/s) |",
        f"| `corpus check --full` (every file hashed) | {full_check_s:.1f} s |",
        f"| `corpus check` (stat walk; hashes only files whose size or mtime moved) "
        f"| {quick_check_ms:.0f} ms |",
        f"| the same check again in one process (nothing moved) | {cached_check_ms:.0f} ms |",
        f"| Corpus page, first render (after the Overview) | {first_ms:.0f} ms |",
        f"| Corpus page, rerun (median) | {rerun_ms:.0f} ms |",
        "",
        "| search over the whole corpus | findings | bare (ms) | runner (ms) | ratio | goal | met |",
        "|---|---:|---:|---:|---:|---:|:---:|",
        *(
            f"| {label} | {found} | {b:.0f} | {o:.0f} | {r:.2f}x | {GOAL_SEARCH}x | "
            f"{'yes' if r <= GOAL_SEARCH else 'no'} |"
            for label, found, b, o, r in rows
        ),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_save:
        (REPO / "benchmarks" / "results" / "corpus_page.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
