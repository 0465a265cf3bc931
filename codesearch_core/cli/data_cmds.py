"""Sub-commands: db (init, import, stats; audit, users, role: `cli.team_cmds`) and export (one
layout per trainer: `EXPORT_FORMATS`): the store.

Every command takes `--db PATH` (default `config.db_path()`, i.e. `CODESEARCH_DB` or
`data/studio.duckdb`). Bad input (a missing file, a bad JSONL line, a store in use by another process)
is a CodesearchError: `cli.main` prints it and exits 2. Lines skipped with `--skip-bad`, and an export
that matched nothing, exit 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from codesearch_core import config
from codesearch_core.cli import split_cmds, team_cmds
from codesearch_core.cli.store_access import open_store
from codesearch_core.errors import InputFileError

if TYPE_CHECKING:
    from codesearch_core.store import DashboardStats, ImportReport

#: `export.ExportFormat`'s values, here so `--help` does not load the exporters (a test compares).
EXPORT_FORMATS: Final = (
    "xlam",
    "hf-chat",
    "hf-preference",
    "hf-prompts",
    "openai-sft",
    "openai-dpo",
    "sharegpt",
    "chat",
    "pairs",
    "dpo-steps",
    "hf-agent",
    "openai-sft-agent",
    "sharegpt-agent",
)
#: The formats of the gym's episodes (`export.EPISODE_FORMATS`): written through the gym, which
#: replays every episode before the file is put in place.
AGENT_FORMATS: Final = EXPORT_FORMATS[-3:]
#: The step-level preference pairs of corrected episodes: written with the gym's prompt and tools.
STEP_PAIRS: Final = "dpo-steps"

EXIT_OK = 0
EXIT_PROBLEMS = 1


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add this module's sub-commands to the `codesearch` parser."""
    _register_db(sub)
    _register_export(sub)


def _db_option(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS: `--db` may come before or after the sub-command without one hiding the other.
    parser.add_argument(
        "--db",
        type=Path,
        default=argparse.SUPPRESS,
        metavar="PATH",
        help=f"the store file (default: $CODESEARCH_DB or {config.db_path()})",
    )


def _db(args: argparse.Namespace) -> Path:
    path: Path | None = getattr(args, "db", None)
    return path if path is not None else config.db_path()


# --- db ------------------------------------------------------------------------------------------


def _register_db(sub: argparse._SubParsersAction[Any]) -> None:
    db = sub.add_parser("db", help="create, fill and inspect the curation store")
    _db_option(db)
    db_sub = db.add_subparsers(dest="db_command", required=True, metavar="ACTION")

    init = db_sub.add_parser(
        "init",
        help="create the store (or migrate an older one)",
        description="Create the store file, or bring an older one up to this build's schema.",
    )
    _db_option(init)
    init.add_argument(
        "--seeds",
        action="store_true",
        help=f"also load the shipped seed blueprints ({config.seeds_file()})",
    )
    init.set_defaults(func=cmd_db_init)

    imp = db_sub.add_parser(
        "import",
        help="import blueprints or proposals JSONL",
        description=(
            "Import a JSONL file. The whole file is checked first: a bad line stops the import "
            "(file:line: why) and nothing is stored, unless --skip-bad. Importing a file again "
            "adds nothing."
        ),
    )
    _db_option(imp)
    imp.add_argument("kind", choices=("blueprints", "proposals"))
    imp.add_argument("file", type=Path, metavar="FILE")
    imp.add_argument(
        "--skip-bad", action="store_true", help="store the good lines, list the bad ones (exit 1)"
    )
    imp.set_defaults(func=cmd_db_import)

    stats = db_sub.add_parser("stats", help="counts and rates")
    _db_option(stats)
    stats.add_argument(
        "--json", action="store_true", help="everything the dashboard shows, as JSON"
    )
    stats.set_defaults(func=cmd_db_stats)

    check = db_sub.add_parser(
        "check",
        help="read the whole store back to find damaged blocks",
        description=(
            "Open the store (a file shorter than its header says is refused there) and read "
            "every row of every table, so DuckDB verifies each data block's checksum. Prints "
            "each table's rows, or why it cannot be read. Exit 1 when something is damaged."
        ),
    )
    _db_option(check)
    check.set_defaults(func=cmd_db_check)
    team_cmds.register_db(db_sub, _db_option)
    split_cmds.register_db(db_sub, _db_option)


def _print_report(what: str, report: ImportReport) -> int:
    for err in report.errors:
        print(f"skipped {err}", file=sys.stderr)
    skipped = f", {report.skipped} bad line(s) skipped" if report.errors else ""
    print(f"{what}: {report.new} new, {report.existing} already stored{skipped}")
    return EXIT_PROBLEMS if report.errors else EXIT_OK


def cmd_db_init(args: argparse.Namespace) -> int:
    from codesearch_core.ingest import import_blueprints_jsonl

    with open_store(_db(args)) as store:
        code = EXIT_OK
        if args.seeds:
            code = _print_report(
                f"seeds {config.seeds_file()}", import_blueprints_jsonl(store, config.seeds_file())
            )
        counts = store.counts()
        print(
            f"store ready: {store.path} (schema {store.schema_version}): "
            f"{counts.blueprints} blueprints, {counts.proposals} proposals"
        )
    return code


def cmd_db_import(args: argparse.Namespace) -> int:
    from codesearch_core.ingest import import_blueprints_jsonl, import_proposals_jsonl

    with open_store(_db(args)) as store:
        if args.kind == "blueprints":
            report = import_blueprints_jsonl(store, args.file, skip_bad=args.skip_bad)
        else:
            report = import_proposals_jsonl(store, args.file, skip_bad=args.skip_bad)
    return _print_report(f"{args.kind} from {args.file}", report)


def cmd_db_check(args: argparse.Namespace) -> int:
    with open_store(_db(args)) as store:
        report = store.check()
        path = store.path
    for table in report.tables:
        state = f"{table.rows:,} rows" if table.rows is not None else f"DAMAGED: {table.error}"
        print(f"{table.name:<22} {state}")
    print(
        f"{len(report.tables)} tables; {report.data_blocks} data blocks read and checksummed "
        f"of {report.used_blocks} blocks in use (the rest hold indexes and the catalog, which "
        "DuckDB checks when it loads them)"
    )
    if report.ok:
        print(f"{path}: no damage found")
        return EXIT_OK
    damaged = ", ".join(t.name for t in report.damaged)
    print(
        f"{path}: damaged ({damaged}). Restore it from a backup, or save what is readable "
        "(`codesearch export`) and start a new store.",
        file=sys.stderr,
    )
    return EXIT_PROBLEMS


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _format_stats(path: Path, stats: DashboardStats) -> str:
    c = stats.counts
    lines = [
        f"store            {path}",
        f"blueprints       {c.blueprints:,}",
        f"proposals        {c.proposals:,}  (valid {c.valid:,}, {_rate(stats.valid_rate)})",
        f"executed         {c.executed:,}  (graded {c.graded:,}, mean span F1 "
        + ("-" if stats.mean_span_f1 is None else f"{stats.mean_span_f1:.3f}")
        + ")",
        f"undecided        {c.undecided:,}",
        f"accepted         {c.accepted:,}  (acceptance {_rate(stats.acceptance_rate)})",
        f"rejected         {c.rejected:,}",
        f"skipped          {c.skipped:,}",
        f"decision events  {c.decision_events:,}",
        f"episodes         {c.episodes:,}",
    ]
    if stats.acceptance_by_tool_language:
        lines.append("accepted / rejected by tool and language:")
        for tool, language, accepted, rejected in stats.acceptance_by_tool_language:
            lines.append(f"  {tool:<16} {language:<12} {accepted:>7,} / {rejected:,}")
    return "\n".join(lines)


def cmd_db_stats(args: argparse.Namespace) -> int:
    with open_store(_db(args)) as store:
        stats = store.dashboard_stats()
        path = store.path
    if args.json:
        print(json.dumps({"store": str(path), **stats.to_dict()}, indent=2, ensure_ascii=False))
    else:
        print(_format_stats(path, stats))
    return EXIT_OK


# --- export --------------------------------------------------------------------------------------


def _f1(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is outside [0, 1]")
    return value


def _register_export(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "export",
        help="write curated items as training data, one JSONL layout per trainer",
        description=(
            "Write the accepted items that match the filters in FORMAT's layout: xlam (xLAM), "
            "hf-chat (transformers chat templates, TRL SFT), hf-preference (TRL DPO / reward "
            "model: pairs ranked by graded reward), hf-prompts (TRL GRPO prompts with "
            "blueprint_id), openai-sft, openai-dpo, sharegpt (LLaMA-Factory, with its "
            "dataset_info.json); chat and pairs are the older layouts. hf-agent, "
            "openai-sft-agent and sharegpt-agent write the gym's accepted episodes (multi-turn, "
            "`codesearch rollouts`), each replayed in the gym before the file is put in place; "
            "an episode whose corpus is gone is left out and counted. The file is written "
            "atomically with OUT.manifest.json beside it, and the folder's README.md (the "
            "dataset card) is rebuilt from the manifests there."
        ),
    )
    _db_option(p)
    p.add_argument("format", choices=EXPORT_FORMATS)
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="PATH",
        help="the JSONL file to write, or a folder (one that exists, or a path without a "
        "suffix) to write FORMAT.jsonl in",
    )
    p.add_argument("--tool", help="the blueprint's reference tool")
    p.add_argument("--language", help="the blueprint's language")
    p.add_argument("--tag", help="a blueprint tag")
    p.add_argument("--blueprint", metavar="ID", help="one blueprint")
    p.add_argument("--engine", help="the engine that proposed the call")
    p.add_argument("--model", help="the model that proposed the call")
    p.add_argument("--min-f1", type=_f1, metavar="X", help="lowest span F1 (0-1)")
    p.add_argument("--max-f1", type=_f1, metavar="X", help="highest span F1 (0-1)")
    p.add_argument(
        "--with-meta", action="store_true", help="add hashes, grades and decision provenance"
    )
    p.add_argument(
        "--include-reference",
        action="store_true",
        help="also export each matching blueprint's reference call as a gold item (the "
        "preference formats always take it as the chosen answer when nothing was accepted)",
    )
    p.add_argument(
        "--include-eval",
        action="store_true",
        help="also export the held-out blueprints (split: eval); left out and counted otherwise",
    )
    p.add_argument(
        "--license",
        default="other",
        help="the dataset card's license field (default: other)",
    )
    p.set_defaults(func=cmd_export)


def _out_file(out: Path, fmt: str) -> Path:
    """`--out` as the file to write: a folder's FORMAT.jsonl, or the file named."""
    return out / f"{fmt}.jsonl" if out.is_dir() or not out.suffix else out


def cmd_export(args: argparse.Namespace) -> int:
    from codesearch_core.export import export, manifest_path
    from codesearch_core.store import QueueFilters

    filters = QueueFilters(
        tool=args.tool,
        language=args.language,
        tag=args.tag,
        blueprint_id=args.blueprint,
        engine=args.engine,
        model=args.model,
        min_f1=args.min_f1,
        max_f1=args.max_f1,
    )
    if args.format in (*AGENT_FORMATS, STEP_PAIRS) and args.include_reference:
        raise InputFileError(
            f"--include-reference adds gold single calls; {args.format} exports the gym's "
            "episodes (`codesearch rollouts --engine reference` plays the references)"
        )
    out = _out_file(args.out, args.format)
    options: dict[str, Any] = {
        "filters": filters,
        "with_meta": args.with_meta,
        "include_eval": args.include_eval,
        "license": args.license,
    }
    replayed = ""
    with open_store(_db(args)) as store:
        if args.format in AGENT_FORMATS:
            from codesearch_core.gym import export_episodes

            manifest, report = export_episodes(store, args.format, out, **options)
            replayed = f"; replayed in the gym: {report.turns:,} turns, {report.calls:,} calls"
        elif args.format == STEP_PAIRS:
            from codesearch_core.gym import export_step_pairs

            manifest = export_step_pairs(store, out, **options)
        else:
            manifest = export(
                store, args.format, out, include_reference=args.include_reference, **options
            )
    what = "episodes" if args.format in AGENT_FORMATS else "records"
    print(
        f"wrote {manifest.rows:,} {args.format} {what} to {out} "
        f"(manifest {manifest_path(out)}){replayed}"
    )
    for kind, skip in manifest.extra.get("skipped", {}).items():
        n, unit = (skip["episodes"], "episode") if kind == "corpus_gone" else (skip["blueprints"],
                                                                             "blueprint")  # fmt: skip
        print(f"skipped {n:,} {unit}(s): {skip['reason']}", file=sys.stderr)
    if manifest.rows == 0:
        print(f"nothing matched: no accepted {what} with these filters", file=sys.stderr)
        return EXIT_PROBLEMS
    return EXIT_OK
