"""Synthesis speed: verified, de-duplicated drafts per minute with the templates engine (no model).

Each corpus is synthesized whole (no limit) into a fresh temp store: the mining passes, every
candidate's reference run and baselines with the real tools, verification, de-duplication and one
store transaction per draft. Drafts per minute = kept drafts over the whole run's wall time. The
issue's goal: >= 200 per minute on a 20k-file corpus on 2 cores (`--large`: 20,000 files taken
evenly from the cached corpus of installed package sources, `benchmarks/large_corpus.py`, ~45k
files, built on first use; the subset is hard links beside it, `large_corpus_20k`).

    uv run python benchmarks/bench_synthesize.py [--corpora webshop datapipe] [--large]
        [--large-files N] [--workers N] [--limit N] [--no-save]

Writes benchmarks/results/synthesize.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from codesearch_core.corpora import list_corpora, list_files  # noqa: E402
from codesearch_core.store import Store  # noqa: E402
from codesearch_core.synthesis import (  # noqa: E402
    TemplateWriter,
    stored_draft_ids,
    stored_intents,
    synthesize,
)

GOAL_PER_MINUTE = 200.0
LARGE_FILES = 20_000


def large_subset(files: int) -> str:
    """A corpus of `files` files taken evenly (by sorted path) from the large corpus, as hard
    links beside it; built once per size. Returns its name."""
    from large_corpus import CACHE_DIR, CORPUS_DIR, build_large_corpus

    build_large_corpus()
    name = f"{CORPUS_DIR.name}_{files // 1000}k"
    target = CACHE_DIR / name
    if (target / ".complete").is_file():
        return name
    every = sorted(p for p in CORPUS_DIR.rglob("*") if p.is_file())
    step = len(every) / files
    for i in range(min(files, len(every))):
        src = every[int(i * step)]
        dest = target / src.relative_to(CORPUS_DIR)
        dest.parent.mkdir(parents=True, exist_ok=True)
        if not dest.exists():
            os.link(src, dest)
    (target / ".complete").write_text("")  # hidden: no corpus file
    return name


def _row(corpus: str, workers: int, limit: int | None, db: Path | None = None) -> str:
    """One run into `db` (a fresh temp store when None) as a table row."""
    files = len(list_files(corpus))
    db = db or Path(tempfile.mkdtemp()) / "bench.duckdb"
    # The store holds its file for the whole run (idle_release_s=None): a reopen between two
    # slow batches would measure the store's open, not synthesis.
    with Store(db, idle_release_s=None) as store:
        started = time.perf_counter()
        report = synthesize(
            corpus, writer=TemplateWriter(), sink=store.drafts, workers=workers, limit=limit,
            known_intents=stored_intents(store, corpus),
            known_drafts=stored_draft_ids(store, corpus),
        )  # fmt: skip
        elapsed = time.perf_counter() - started
    c = report.counts
    per_minute = c.kept * 60 / elapsed if elapsed else 0.0
    return (
        f"| {corpus} | {files:,} | {c.candidates:,} | {c.mined} | {c.verified} | {c.deduplicated} "
        f"| {c.kept} | {c.already_drafted} | {elapsed:.1f} | {per_minute:.0f} |"
    )


HEADER = (
    "| corpus | files | candidates | mined | verified | deduplicated | kept | already drafted "
    "| seconds | drafts/min |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--corpora", nargs="*", default=None, help="shipped corpora (default: all)")
    ap.add_argument("--large", action="store_true", help="also the 20k-file corpus")
    ap.add_argument("--large-files", type=int, default=LARGE_FILES)
    ap.add_argument("--large-limit", type=int, default=1000, help="drafts to make on it")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    names = args.corpora if args.corpora is not None else list_corpora()
    rows = [_row(name, args.workers, args.limit) for name in names]
    large: list[str] = []
    if args.large:
        from large_corpus import CACHE_DIR

        name = large_subset(args.large_files)
        os.environ["CODESEARCH_CORPORA"] = str(CACHE_DIR)
        load_large = os.getloadavg()[0]
        db = Path(tempfile.mkdtemp()) / "bench.duckdb"
        first = _row(name, args.workers, args.large_limit, db)
        # The same command again on the same store: what a re-run costs (the mining passes; the
        # candidates drafted before are skipped) and finds.
        again = _row(name, args.workers, args.large_limit, db)
        large = [
            "",
            f"`--large`: {args.large_files:,} files taken evenly from the cached corpus of installed "
            f"package sources, `--limit {args.large_limit}`, then the same run again on the same "
            f"store; load average {load_large:.1f} at start, {os.getloadavg()[0]:.1f} at end.",
            "",
            *HEADER,
            first,
            again.replace(f"| {name} |", f"| {name} (again) |", 1),
        ]
    lines = [
        "# Synthesis: drafts per minute (templates engine)",
        "",
        f"Each shipped corpus synthesized whole into a fresh store, {args.workers} worker threads. "
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; load average {load_before:.1f} at start. Goal: >= "
        f"{GOAL_PER_MINUTE:.0f} verified, de-duplicated drafts per minute on a 20k-file corpus "
        "(`--large`). Drafts per minute = new drafts over the run's wall time, the mining passes "
        "included.",
        "",
        *HEADER,
        *rows,
        *large,
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_save:
        out = REPO / "benchmarks" / "results" / "synthesize.md"
        out.write_text(text, encoding="utf-8")
        print(f"written to {out}")


if __name__ == "__main__":
    main()
