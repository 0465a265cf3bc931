"""Sub-command: verify, which executes and grades the store's pending proposals (locally or on Ray)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from codesearch_core import config
from codesearch_core.cli.progress import Progress
from codesearch_core.errors import InputFileError


def add_ray_argument(p: argparse.ArgumentParser, what: str = "run as Ray tasks") -> None:
    """`--ray [ADDRESS]` (`verify`, `rollouts`): None without the flag, "" for the default Ray."""
    p.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help=(
            f"{what}: 'auto' (the cluster this node is in), 'ray://HEAD:10001', or no "
            "address for $RAY_ADDRESS or a new local Ray (needs the 'ray' extra)"
        ),
    )


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add `codesearch verify` to the parser."""
    from codesearch_core.tools import DEFAULT_MAX_FINDINGS, DEFAULT_TIMEOUT_S

    p = sub.add_parser(
        "verify",
        help="execute and grade every pending proposal in the store, in parallel",
        description=(
            "Run each proposal of the store that has no execution yet with the real rg / "
            "ast-grep, grade its findings against its blueprint's expected findings, and record "
            "run, grade and reward. Results are written in small batches as they arrive; an "
            "interrupted run keeps them, and running again verifies only what is still pending. "
            "Failed calls are recorded results, not failures of the command (exit 0)."
        ),
    )
    p.add_argument("--db", type=Path, help=f"the store (default {config.db_path()})")
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help=f"worker processes (default: all cores, here {config.usable_cores()}; 1 runs inline)",
    )
    add_ray_argument(p)
    p.add_argument("--limit", type=int, default=None, help="verify at most N proposals")
    p.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help=f"seconds per call (default {DEFAULT_TIMEOUT_S:g})",
    )
    p.add_argument(
        "--max-findings",
        type=int,
        default=DEFAULT_MAX_FINDINGS,
        help=f"findings kept per call (default {DEFAULT_MAX_FINDINGS})",
    )
    p.add_argument(
        "--batch-size", type=int, default=config.VERIFY_BATCH_SIZE, help=argparse.SUPPRESS
    )
    p.add_argument(
        "--stale",
        action="store_true",
        help=(
            "instead: re-run every blueprint reference and accepted proposal made on another "
            "corpus snapshot or tool version; changed findings go to the Drift queue (Review)"
        ),
    )
    p.set_defaults(func=run_verify)


def run_verify(args: argparse.Namespace) -> int:
    from codesearch_core.cli.store_access import open_store
    from codesearch_core.errors import StoreError
    from codesearch_core.verify import OutcomeStream, verify_pending

    for flag, value, least in (
        ("--workers", args.workers, 1),
        ("--limit", args.limit, 1),
        ("--max-findings", args.max_findings, 0),
        ("--batch-size", args.batch_size, 1),
    ):
        if value is not None and value < least:
            raise InputFileError(f"{flag} must be at least {least}, got {value}")
    if args.timeout <= 0:
        raise InputFileError(f"--timeout must be positive, got {args.timeout}")
    path: Path = args.db or config.db_path()
    if not path.exists():
        raise StoreError(
            f"no store at {path}: make one with `codesearch propose` (or pass --db PATH)"
        )
    if args.stale:
        return run_stale(path)
    execute: OutcomeStream | None = None
    where = f"{args.workers or 'all'} local worker(s)"
    if args.ray is not None:
        from functools import partial

        from codesearch_core.verify import verify_many_ray

        execute = partial(verify_many_ray, address=args.ray or None)
        where = f"Ray ({args.ray or 'local or $RAY_ADDRESS'})"
    progress = Progress("verify", unit="calls")

    def show(done: Any) -> None:
        progress.update(done.done, total=done.total, errors=done.errors)

    with open_store(path) as store:
        executed_before = store.counts().executed
        try:
            report = verify_pending(
                store,
                workers=args.workers,
                batch_size=args.batch_size,
                limit=args.limit,
                timeout_s=args.timeout,
                max_findings=args.max_findings,
                on_progress=show,
                execute=execute,
            )
        except KeyboardInterrupt:
            # The store turns a Ctrl-C that lands in a DuckDB statement into KeyboardInterrupt too.
            # What was written is asked of the store: the Ctrl-C may have cut the counting short.
            progress.close()
            written = store.counts().executed - executed_before
            print(
                f"interrupted: {written} results written to {path}; "
                "run `codesearch verify` again to verify the rest",
                file=sys.stderr,
            )
            return 130
        finally:
            progress.close()
    for corpus, n in report.skipped.items():
        print(
            f"left {n} proposal(s) pending: their corpus {corpus!r} is not on this machine "
            f"(`codesearch corpus add {corpus} --from SOURCE`, then `codesearch verify` again)",
            file=sys.stderr,
        )
    if report.count == 0:
        if not report.skipped:
            print(f"nothing to verify: every proposal in {path} has been executed")
        return 0
    kinds = ", ".join(f"{kind} {n}" for kind, n in report.error_kinds.items())
    print(
        f"verified {report.count} proposals with {where}: {report.ok} ok, {report.errors} errors"
        f"{f' ({kinds})' if kinds else ''}; mean F1 {report.mean_f1:.3f}; "
        f"{report.elapsed_s:.1f}s, {report.calls_per_s:.1f} calls/s → {path}"
    )
    return 0


def run_stale(path: Path) -> int:
    """`codesearch verify --stale`: exit 0 whatever drifted (the Drift queue holds it)."""
    from codesearch_core.cli.store_access import open_store
    from codesearch_core.corpora import check_corpus, short_id
    from codesearch_core.verify import verify_stale

    with open_store(path) as store:
        report = verify_stale(store)
        held = store.drift.held_out()
    for name, snapshot in sorted(report.snapshots.items()):
        check = check_corpus(name)
        if check.pinned_id is not None and not check.ok:
            print(
                f"corpus {name}: differs from its manifest in {len(check.lines())} file(s) "
                f"(`codesearch corpus check {name}`); re-checked on {short_id(snapshot)}"
            )
    print(
        f"re-checked {report.references_checked} reference call(s) and "
        f"{report.accepted_checked} accepted proposal(s) made on another snapshot or tool "
        f"version: {report.references_drifted} reference(s) and {report.accepted_drifted} "
        f"accepted proposal(s) changed → Drift queue on the Review page"
        + (f"; {held} accepted item(s) held out of exports until decided" if held else "")
    )
    for item_id in report.drifted_ids:
        print(f"  drift  {item_id}")
    return 0
