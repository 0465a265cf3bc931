"""Sub-commands: run, grade (the verified core).

The corpora, the tools and the models are imported where they are used, not at the top: the
modules of other commands import this one for its exit codes and helpers, and should not pay for
them when they start.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from codesearch_core import config
from codesearch_core.errors import CodesearchError, CorpusError, InputFileError, ToolCallError

if TYPE_CHECKING:
    from codesearch_core.models import Blueprint, Finding, Plan, RunResult, Span, ToolCall

EXIT_OK = 0
EXIT_PROBLEMS = 1
_TEXT_PREVIEW_CHARS = 160


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add this module's sub-commands to the `codesearch` parser."""
    register_run(sub)
    register_grade(sub)


# --- run -----------------------------------------------------------------------------------------


def register_run(sub: argparse._SubParsersAction[Any]) -> None:
    from codesearch_core.tools import DEFAULT_MAX_FINDINGS, DEFAULT_TIMEOUT_S

    p = sub.add_parser(
        "run",
        help="execute one tool call (or a plan) with the real rg / ast-grep",
        description=(
            "Execute a tool call over a corpus and print its findings. CALL is the call's JSON "
            '(`{"name": "ripgrep_search", "arguments": {...}}`), a plan\'s JSON (`{"steps": [...]}`) '
            "or @FILE to read it from a file. Exit status: 0 ok, 1 the call failed (the reason is on "
            "stderr), 2 bad input."
        ),
    )
    p.add_argument("call", metavar="CALL", help="call or plan JSON, or @FILE")
    p.add_argument(
        "--corpus",
        required=True,
        metavar="NAME_OR_PATH",
        help="a corpus name (a directory under the corpora dir) or a directory path",
    )
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    p.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help=f"seconds before the tool is stopped (default {DEFAULT_TIMEOUT_S:g})",
    )
    p.add_argument(
        "--max-findings",
        type=int,
        default=DEFAULT_MAX_FINDINGS,
        metavar="N",
        help=f"stop after N findings (default {DEFAULT_MAX_FINDINGS})",
    )
    p.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    from codesearch_core.tools import (
        parse_plan,
        parse_tool_call,
        run_plan,
        run_result_to_dict,
        run_tool_call,
    )

    # Bad input raises CodesearchError, which `cli.main` prints and turns into exit status 2.
    obj = _read_call_json(str(args.call))
    root = _corpus_dir(str(args.corpus))
    if args.timeout <= 0:
        raise ToolCallError("must be a positive number of seconds", "--timeout")
    if args.max_findings < 0:
        raise ToolCallError("must be 0 or more", "--max-findings")
    if isinstance(obj, dict) and "steps" in obj:
        plan = parse_plan(obj)
        result = run_plan(plan, root, timeout_s=args.timeout, max_findings=args.max_findings)
    else:
        call = parse_tool_call(obj)
        result = run_tool_call(call, root, timeout_s=args.timeout, max_findings=args.max_findings)
    if args.json:
        print(json.dumps(run_result_to_dict(result), ensure_ascii=False, indent=2))
    else:
        for finding in result.findings:
            print(format_finding(finding))
        print(_summary(result), file=sys.stderr)
        for warning in result.warnings:
            print(f"warning: {warning}", file=sys.stderr)
    if not result.ok:
        print(f"error ({result.error_kind}): {result.error}", file=sys.stderr)
        return EXIT_PROBLEMS
    return EXIT_OK


def format_finding(finding: Finding) -> str:
    """`path:line:col: text`, the text's first line shortened (grep-style, one line per finding)."""
    text = finding.text.splitlines()[0] if finding.text else ""
    if len(text) > _TEXT_PREVIEW_CHARS:
        text = text[:_TEXT_PREVIEW_CHARS] + "..."
    more = " ..." if finding.end_line > finding.start_line else ""
    return f"{finding.path}:{finding.start_line}:{finding.start_col}: {text}{more}"


def _summary(result: RunResult) -> str:
    files = len({f.path for f in result.findings})
    cut = " (truncated: raise --max-findings)" if result.truncated else ""
    return f"{len(result.findings)} findings in {files} files, {result.elapsed_s:.3f} s{cut}"


def _read_call_json(value: str) -> Any:
    source = "CALL"
    text = value
    if value.startswith("@"):
        source = value[1:]
        try:
            text = Path(source).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise InputFileError(f"cannot read the call: {err}", source=source) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputFileError(
            f"not valid JSON ({err.msg} at line {err.lineno} column {err.colno})", source=source
        ) from None


def _corpus_dir(value: str) -> Path:
    """A corpus name (under the corpora dir) first, else a directory path."""
    from codesearch_core.corpora import corpus_root

    try:
        return corpus_root(value)
    except CorpusError:
        path = Path(value)
        if path.is_dir():
            return path
        raise


# --- grade ---------------------------------------------------------------------------------------


def register_grade(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "grade",
        help="run a call on a blueprint's corpus and grade it against the expected spans",
        description=(
            "Execute CALL on the corpus of a blueprint, then print the grade (span precision, "
            "recall, F1, file IoU), the reward and its components, and the diff (hits, misses, "
            "extras). The blueprint is an id from the seeds file (or --seeds FILE) or @FILE holding "
            "one blueprint. Exit status: 0 graded (even when the call found nothing), 2 bad input."
        ),
    )
    p.add_argument(
        "--blueprint", required=True, metavar="ID_OR_@FILE", help="blueprint id or @FILE"
    )
    p.add_argument(
        "--call", required=True, metavar="CALL_OR_@FILE", help="call or plan JSON, or @FILE"
    )
    p.add_argument(
        "--seeds", type=Path, metavar="FILE", help="blueprints JSONL to look the id up in"
    )
    p.add_argument(
        "--tolerance", type=int, default=0, metavar="N", help="line tolerance (default 0)"
    )
    add_matching_option(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_grade)


#: `grading.Matching`'s values and default, here so building the parser does not load the grader
#: (numpy): `codesearch run` starts without it. A test compares them.
MATCHINGS: Final = ("coverage", "overlap")
DEFAULT_MATCHING_NAME: Final = "coverage"


def add_matching_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--matching",
        choices=MATCHINGS,
        default=DEFAULT_MATCHING_NAME,
        help="credit of a matched span: coverage (line IoU of the pair, default) or overlap "
        "(any shared line is a full hit)",
    )


def cmd_grade(args: argparse.Namespace) -> int:
    from codesearch_core.corpora import corpus_root
    from codesearch_core.grading import Matching, grade_and_diff, line_coverage, reward
    from codesearch_core.models import Plan
    from codesearch_core.tools import (
        parse_plan,
        parse_tool_call,
        plan_to_dict,
        run_plan,
        run_tool_call,
    )

    bp = _load_blueprint(str(args.blueprint), args.seeds)
    if args.tolerance < 0:
        raise ToolCallError("must be 0 or more", "--tolerance")
    obj = _read_call_json(str(args.call))
    root = corpus_root(bp.corpus)
    answer: ToolCall | Plan
    if isinstance(obj, dict) and "steps" in obj:
        answer = parse_plan(obj)
        run = run_plan(answer, root)
    else:
        answer = parse_tool_call(obj)
        run = run_tool_call(answer, root)
    g, diff = grade_and_diff(
        run.findings, bp.expected, line_tolerance=args.tolerance, matching=Matching(args.matching)
    )
    r = reward(g, answer, run)
    if args.json:
        report = {
            "blueprint": bp.id,
            "corpus": bp.corpus,
            "call": plan_to_dict(answer) if isinstance(answer, Plan) else answer.to_dict(),
            "run": {
                "ok": run.ok,
                "error_kind": None if run.error_kind is None else run.error_kind.value,
                "error": run.error,
                "findings": len(run.findings),
                "truncated": run.truncated,
                "warnings": list(run.warnings),
            },
            "matching": args.matching,
            "grade": dataclasses.asdict(g),
            "reward": {"total": r.total, "components": dict(r.components)},
            "diff": {
                "hits": [
                    {
                        "found": p.to_dict(),
                        "expected": e.to_dict(),
                        **dataclasses.asdict(line_coverage(p, e)),
                    }
                    for p, e in diff.hits
                ],
                "misses": [s.to_dict() for s in diff.misses],
                "extras": [p.to_dict() for p in diff.extras],
                # Found on a span marked supporting: neither a hit nor an extra (docs/grading.md).
                "supporting": [
                    {"found": p.to_dict(), "expected": e.to_dict()} for p, e in diff.supporting
                ],
            },
        }
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return EXIT_OK
    print(f"blueprint {bp.id} (corpus {bp.corpus}): {bp.intent}")
    if not run.ok:
        print(f"run failed ({run.error_kind}): {run.error}")
    for warning in run.warnings:
        print(f"warning: {warning}")
    print(
        f"grade: span_f1={g.span_f1:.3f} precision={g.span_precision:.3f} "
        f"recall={g.span_recall:.3f} file_iou={g.file_iou:.3f} "
        f"(matched {g.n_matched} of {g.n_expected} expected, {g.n_predicted} found; "
        f"{args.matching} matching)"
    )
    parts = " ".join(f"{k}={v:g}" for k, v in r.components.items())
    print(f"reward: {r.total:.3f} ({parts})")
    for p, e in diff.hits:
        cover = line_coverage(p, e)
        part = ""
        if cover.partial:
            part = (f"  [partial: {cover.covered} of {cover.covered + cover.missed} lines, "
                    f"{cover.spilled} spilled]")  # fmt: skip
        print(f"  hit    {span_text(e)}  <- {format_finding(p)}{part}")
    for e in diff.misses:
        print(f"  miss   {span_text(e)}")
    for p in diff.extras:
        print(f"  extra  {format_finding(p)}")
    for p, e in diff.supporting:
        print(f"  context {span_text(e)}  <- {format_finding(p)}  [supporting: not counted]")
    return EXIT_OK


def span_text(span: Span) -> str:
    lines = (
        f"{span.start_line}"
        if span.start_line == span.end_line
        else f"{span.start_line}-{span.end_line}"
    )
    return f"{span.path}:{lines}"


def _load_blueprint(value: str, seeds: Path | None) -> Blueprint:
    """`@FILE` (one blueprint: a JSON object or a one-line JSONL), else an id in the seeds file."""
    from codesearch_core.corpora import blueprint_from_dict, read_blueprints_jsonl

    if value.startswith("@"):
        path = Path(value[1:])
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise InputFileError(f"cannot read the blueprint: {err}", source=str(path)) from None
        try:
            return blueprint_from_dict(json.loads(text))
        except json.JSONDecodeError:
            pass  # not one JSON document: read it as JSONL below
        except CodesearchError as err:
            raise InputFileError(str(err), source=str(path)) from None
        found, _ = read_blueprints_jsonl(text.splitlines())
        if len(found) != 1:
            raise InputFileError(
                f"holds {len(found)} blueprints; pass one, or an id with --seeds {path}",
                source=str(path),
            )
        return found[0]
    source = seeds if seeds is not None else config.seeds_file()
    blueprints, _ = read_blueprints_jsonl(source)
    for bp in blueprints:
        if bp.id == value:
            return bp
    raise InputFileError(
        f"unknown blueprint id {value!r} ({len(blueprints)} blueprints there; "
        "see `codesearch seeds verify` for the ids)",
        source=str(source),
    )
