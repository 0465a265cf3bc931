"""Sub-commands of `codesearch seeds`: verify (the reference calls reproduce), pin (record the
expected files' hashes) and audit (no natural wrong call scores near the reference, and each
seed's second opinion agrees with its spans; `verify.audit`)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from codesearch_core import config
from codesearch_core.cli.tool_cmds import EXIT_OK, EXIT_PROBLEMS, add_matching_option, span_text
from codesearch_core.corpora import (
    FIRST_LINE_MAX,
    KEYWORD_HIT,
    KEYWORD_SHARE,
    WEAK_ABOVE,
    check_seed_file,
    corpus_root,
    pin_seed_file,
)
from codesearch_core.errors import CorpusError
from codesearch_core.models import Blueprint
from codesearch_core.tools import run_plan, run_tool_call

if TYPE_CHECKING:  # the grader (numpy) loads when a seeds command runs, not for `--help`
    from codesearch_core.verify import AuditSummary, SeedAudit


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("seeds", help="the seed blueprints: the verified core")
    seeds_sub = p.add_subparsers(dest="seeds_command", required=True, metavar="SUBCOMMAND")
    v = seeds_sub.add_parser(
        "verify",
        help="check the seed rules and that every reference call finds exactly its expected spans",
        description=(
            "Check each seed against the seed rules (tag vocabulary, counter-calls, spans within "
            "their files, pinned files unchanged), then run its reference call with the real tools "
            "and compare the findings with its expected spans (line tolerance 0). Exit status: 0 all "
            "hold, 1 some do not, 2 the file cannot be read."
        ),
    )
    _file_option(v)
    v.add_argument("--json", action="store_true", help="print one JSON report")
    v.set_defaults(func=cmd_seeds_verify)
    pin = seeds_sub.add_parser(
        "pin",
        help="record the sha256 of every seed's expected files (after checking the spans hold)",
        description=(
            "Rewrite the seed file with each seed's `pins`: the sha256 of every file its expected "
            "spans are in. `seeds verify` then names any seed whose file changed since."
        ),
    )
    _file_option(pin)
    pin.set_defaults(func=cmd_seeds_pin)
    register_audit(seeds_sub)


def _file_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--file", type=Path, metavar="PATH", help="blueprints JSONL (default: the shipped seeds)"
    )


def seed_source(args: argparse.Namespace) -> Path:
    path: Path = args.file if args.file is not None else config.seeds_file()
    return path


def cmd_seeds_pin(args: argparse.Namespace) -> int:
    source = seed_source(args)
    changed = pin_seed_file(source)
    print(f"{source}: pinned {changed} seed(s) to their expected files and corpus snapshot")
    return EXIT_OK


def cmd_seeds_verify(args: argparse.Namespace) -> int:
    source = seed_source(args)
    blueprints, problems = check_seed_file(source)
    for problem in problems:
        print(problem, file=sys.stderr)
    reports = [_verify_seed(bp) for bp in blueprints]
    failed = [r for r in reports if not r["ok"]]
    other = _other_snapshot(blueprints)
    for r in reports:
        r["other_snapshot"] = r["id"] in other
    if args.json:
        summary = {
            "file": str(source),
            "total": len(reports),
            "failed": len(failed),
            "rule_problems": [str(p) for p in problems],
            "other_snapshot": sorted(other),
        }
        print(json.dumps({**summary, "seeds": reports}, ensure_ascii=False, indent=2))
    else:
        for r in reports:
            status = "ok  " if r["ok"] else "FAIL"
            detail = f"{r['matched']}/{r['expected']} spans, {r['found']} found"
            if r["misses"] or r["extras"]:
                detail += f", {len(r['misses'])} missed, {len(r['extras'])} extra"
            if r["error"]:
                detail += f", error: {r['error']}"
            print(f"{status} {r['id']:<48} {r['tool']:<16} {detail}")
            for miss in r["misses"]:
                print(f"       miss  {miss}")
            for extra in r["extras"]:
                print(f"       extra {extra}")
        if other:
            print(
                f"{len(other)} seed(s) were written against another snapshot of their corpus "
                "(`codesearch seeds pin` records the current one once they reproduce):"
            )
            for seed_id in sorted(other):
                print(f"       snapshot {seed_id}: {other[seed_id]}")
        print(
            f"{len(reports) - len(failed)} of {len(reports)} seeds reproduce; "
            f"{len(problems)} seed-rule problem(s)"
        )
    return EXIT_PROBLEMS if failed or problems else EXIT_OK


def _other_snapshot(blueprints: list[Blueprint]) -> dict[str, str]:
    """Seeds whose recorded snapshot is not their corpus's now: id -> "pinned X, now Y"."""
    from codesearch_core.corpora import current_snapshot, short_id

    now: dict[str, str | None] = {}
    out = {}
    for bp in blueprints:
        if bp.snapshot is None:
            continue
        if bp.corpus not in now:
            try:
                now[bp.corpus] = current_snapshot(bp.corpus)
            except CorpusError:
                now[bp.corpus] = None
        if bp.snapshot != now[bp.corpus]:
            out[bp.id] = f"pinned {short_id(bp.snapshot)}, now {short_id(now[bp.corpus])}"
    return out


def _verify_seed(bp: Blueprint) -> dict[str, Any]:
    report: dict[str, Any] = {
        "id": bp.id,
        "tool": bp.tool.value,
        "corpus": bp.corpus,
        "expected": len(bp.expected),
        "found": 0,
        "matched": 0,
        "misses": [],
        "extras": [],
        "error": "",
    }
    try:
        root = corpus_root(bp.corpus)
        run = run_plan(bp.plan, root) if bp.plan else run_tool_call(bp.reference_call, root)
    except CorpusError as err:
        return {**report, "ok": False, "error": str(err)}
    from codesearch_core.grading import grade_and_diff

    g, diff = grade_and_diff(run.findings, bp.expected)
    report.update(
        found=g.n_predicted,
        matched=g.n_matched,
        misses=[span_text(s) for s in diff.misses],
        extras=[span_text(f.span) for f in diff.extras],
        error="" if run.ok else f"{run.error_kind}: {run.error}",
    )
    report["ok"] = run.ok and not run.truncated and not diff.misses and not diff.extras
    return report


# --- audit ---------------------------------------------------------------------------------------

#: Set-level goals the summary reports against (issue 14): seeds, languages, per category.
TARGETS: Final[Mapping[str, int]] = {"seeds": 120, "languages": 14, "empty-answer": 12, "plan": 12}
CATEGORY_TARGET: Final = 8


def register_audit(seeds_sub: argparse._SubParsersAction[Any]) -> None:
    a = seeds_sub.add_parser(
        "audit",
        help=(
            "run each seed's counter-calls and automatic baselines and print their rewards; run "
            "its second opinion"
        ),
        description=(
            "For each seed, run its counter-calls (the natural wrong calls its author wrote down) "
            "and automatic baselines (keyword rg calls for ast-grep patterns, the reference "
            "without each flag, the pattern in a sibling language, the first line of each expected "
            "span) and print each reward next to the reference's. Then run the seed's second "
            "opinion, the checks its `second_opinion` declares (searches a reader would also "
            "count, `covers`, or leave out, `excludes`), on the whole corpus against its expected "
            "spans: `ok`, or `missed:<why>` (a line a covers check finds lies outside every "
            "span), `included:<why>` (a span holds a line an excludes check finds), "
            "`second_opinion_failed:...` (a check could not run). A seed is weak when a "
            f"counter-call scores above {WEAK_ABOVE}. Exit status: 0 no weak seed, no seed whose "
            "second opinion disagrees, a keyword call "
            f"reaches {KEYWORD_HIT} on at most {KEYWORD_SHARE:.0%} of the ast-grep seeds, and "
            f"first-line scores at most {FIRST_LINE_MAX} on mostly multi-line seeds; 1 otherwise; "
            "2 the file cannot be read."
        ),
    )
    _file_option(a)
    add_matching_option(a)
    a.add_argument("--workers", type=int, default=4, metavar="N", help="seeds at a time")
    a.add_argument("--json", action="store_true", help="print one JSON report")
    a.set_defaults(func=cmd_seeds_audit)


def cmd_seeds_audit(args: argparse.Namespace) -> int:
    source = seed_source(args)
    blueprints, problems = check_seed_file(source)
    for problem in problems:
        print(problem, file=sys.stderr)
    from codesearch_core.grading import Matching
    from codesearch_core.verify import audit_seeds, summarize

    audits = audit_seeds(blueprints, matching=Matching(args.matching), workers=args.workers)
    summary = summarize(audits)
    if args.json:
        print(json.dumps(_audit_json(source, audits, summary), ensure_ascii=False, indent=2))
    else:
        for audit in audits:
            _print_audit(audit)
        print(_summary_line(summary))
    return EXIT_OK if summary.passed and not problems else EXIT_PROBLEMS


def _second_text(audit: SeedAudit) -> str:
    """The second opinion as the audit shows it: "" for no check, `ok`, or why not."""
    if audit.second_opinion is None:
        return ""
    return audit.second_opinion or "ok"


def _print_audit(audit: SeedAudit) -> None:
    flag = "WEAK" if audit.weak else "FAIL" if audit.disagrees else "ok  "
    second = _second_text(audit)
    tail = f"  second opinion: {second}" if second else ""
    print(f"{flag} {audit.seed.id}  reference {audit.reference:.2f}{tail}")
    for b in audit.baselines:
        note = ""
        if b.kind == "counter" and b.reward > WEAK_ABOVE:
            note = "  <- above the weak line"
        elif b.kind == "drop-flag" and b.reward >= 1.0:
            note = "  <- the flag changes nothing here"
        elif b.kind == "keyword" and b.reward >= KEYWORD_HIT:
            note = "  <- text search is as good"
        print(f"       {b.kind:<10} {b.reward:5.2f}  {b.label}{note}")


def _summary_line(s: AuditSummary) -> str:
    def mark(value: int, target: int) -> str:
        return f"{value}" if value >= target else f"{value} (target {target})"

    cats = ", ".join(
        f"{tag.removeprefix('adversarial:')} {mark(n, CATEGORY_TARGET)}"
        for tag, n in s.categories.items()
        if tag.startswith("adversarial:")
    )
    return (
        f"{mark(s.seeds, TARGETS['seeds'])} seeds, {mark(s.languages, TARGETS['languages'])} "
        f"languages; empty-answer {mark(s.categories.get('empty-answer', 0), TARGETS['empty-answer'])}, "
        f"plan {mark(s.categories.get('plan', 0), TARGETS['plan'])}; {cats}; "
        f"weak {len(s.weak)}; keyword rg >= {KEYWORD_HIT} on {s.keyword_reaching} of "
        f"{s.ast_grep_seeds} ast-grep seeds ({s.keyword_share:.0%}, at most {KEYWORD_SHARE:.0%}); "
        f"first line only > {FIRST_LINE_MAX} on {len(s.first_line_over)} multi-line seed(s); "
        f"second opinion on {s.second_opinion_checked} seed(s): "
        f"{len(s.second_opinion_disagree)} disagree, {s.second_opinion_none} declare none"
    )


def _audit_json(source: Path, audits: list[SeedAudit], s: AuditSummary) -> dict[str, Any]:
    return {
        "file": str(source),
        "passed": s.passed,
        "summary": {
            "seeds": s.seeds,
            "languages": s.languages,
            "categories": dict(s.categories),
            "weak": list(s.weak),
            "ast_grep_seeds": s.ast_grep_seeds,
            "keyword_reaching": s.keyword_reaching,
            "keyword_share": s.keyword_share,
            "first_line_over": list(s.first_line_over),
            "second_opinion_checked": s.second_opinion_checked,
            "second_opinion_disagree": list(s.second_opinion_disagree),
            "second_opinion_none": s.second_opinion_none,
        },
        "seeds": [
            {
                "id": a.seed.id,
                "reference": a.reference,
                "weak": a.weak,
                "second_opinion": _second_text(a) or None,
                "disagrees": a.disagrees,
                "baselines": [
                    {
                        "kind": b.kind,
                        "label": b.label,
                        "reward": b.reward,
                        "call": None if b.call is None else b.call.to_dict(),
                        **({"why": b.why} if b.why else {}),
                    }
                    for b in a.baselines
                ],
            }
            for a in audits
        ],
    }
