"""The unit of a data set: an item, a verified task as one JSON object (one line of its files).

An item comes from a synthesized draft or a seed blueprint (`item_from_draft`,
`item_from_blueprint`), is run and graded again by `verify_items` (the verify layer's process
pool for single calls, `run_plan` for a plan), and becomes an `ExportRow` for the export layouts
(`export_row`). Items are plain dicts with sorted keys, so their lines are the same bytes on
every build.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import msgspec

from codesearch_core.corpora import corpus_root
from codesearch_core.grading import score
from codesearch_core.models import Blueprint, RunResult, Span, sha256_hex
from codesearch_core.store import Draft, ExportRow
from codesearch_core.tools import parse_plan, run_plan
from codesearch_core.verify import VerifyTask, verify_many

Item = dict[str, Any]
PLAN_TOOL: Final = "plan"
_encode = msgspec.json.Encoder(order="sorted").encode


def item_line(item: Mapping[str, Any]) -> bytes:
    """An item as its JSON line: keys sorted, compact, UTF-8 kept."""
    return _encode(item) + b"\n"


def read_items(path: Path) -> list[Item]:
    with path.open("rb") as fh:
        return [msgspec.json.decode(line) for line in fh if line.strip()]


class _Run(msgspec.Struct, frozen=True):
    """One line of the verify stage's runs file."""

    id: str
    run: RunResult


def write_runs(path: Path, runs: Mapping[str, RunResult]) -> None:
    """Each item's run as one line, in the order of the items' ids."""
    with path.open("wb") as fh:
        for item_id in sorted(runs):
            fh.write(_encode(_Run(item_id, runs[item_id])) + b"\n")


def read_runs(path: Path) -> dict[str, RunResult]:
    """The runs `write_runs` wrote, by item id; none if there is no such file (a stage kept by
    an older build)."""
    if not path.is_file():
        return {}
    decoder = msgspec.json.Decoder(_Run)
    with path.open("rb") as fh:
        return {r.id: r.run for r in map(decoder.decode, fh) if r.id}


def _expected(spans: Iterable[Span]) -> list[dict[str, Any]]:
    return [s.to_dict() for s in sorted(spans)]


def item_from_draft(draft: Draft) -> Item:
    return {
        "id": draft.id,
        "source": "synthesis",
        "corpus": draft.corpus,
        "language": draft.language,
        "intent": draft.intent,
        "tool": draft.reference_call.name.value,
        "rule": draft.rule,
        # What the rule was mined for: the second opinion's checks are built from it.
        "subject": str(draft.sample.get("subject", "")),
        "difficulty": draft.difficulty.value,
        "tags": sorted(draft.tags),
        "reference": draft.reference_call.to_dict(),
        "expected": _expected(draft.expected),
    }


def item_from_blueprint(bp: Blueprint) -> Item:
    return {
        "id": bp.id,
        "source": "seed",
        "corpus": bp.corpus,
        "language": bp.language,
        "intent": bp.intent,
        "tool": PLAN_TOOL if bp.plan is not None else bp.reference_call.name.value,
        "rule": "seed",
        "difficulty": bp.difficulty.value,
        "tags": sorted(bp.tags),
        "reference": bp.reference_dict(),
        "expected": _expected(bp.expected),
    }


def spans_of(item: Mapping[str, Any]) -> tuple[Span, ...]:
    return tuple(
        Span(s["path"], int(s["start_line"]), int(s["end_line"])) for s in item["expected"]
    )


def _graded(item: Item, ok: bool, reward: float, f1: float | None, error: str | None) -> Item:
    return {**item, "verified": {"ok": ok, "reward": round(reward, 6),
                                 "span_f1": None if f1 is None else round(f1, 6),
                                 "error": error}}  # fmt: skip


def _verify_plan(item: Item, timeout_s: float) -> Item:
    plan = parse_plan(item["reference"])
    run = run_plan(plan, corpus_root(item["corpus"]), timeout_s=timeout_s)
    grade, reward = score(run, plan, spans_of(item), calls_made=len(plan.steps))
    return _graded(item, run.ok, reward.total, grade.span_f1 if grade else None, run.error)


def verify_items(
    items: Sequence[Item],
    *,
    timeout_s: float,
    workers: int,
    on_progress: Callable[[int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    runs: dict[str, RunResult] | None = None,
) -> list[Item] | None:
    """Each item run on its corpus and graded against its expected spans, in the items' order;
    None when `should_stop` cut the run short (nothing of a half-run stage is kept). `runs`, if
    given, gets each single-call item's run by its id (for the export's observations)."""
    by_id = {item["id"]: item for item in items}
    singles = [i for i in items if i["tool"] != PLAN_TOOL]
    tasks = [
        VerifyTask(
            proposal_id=i["id"],
            call_json=json.dumps(i["reference"], sort_keys=True),
            corpus=i["corpus"],
            corpus_root=str(corpus_root(i["corpus"])),
            expected=spans_of(i),
            timeout_s=timeout_s,
        )
        for i in singles
    ]
    done: dict[str, Item] = {}
    outcomes: Iterator[Any] = verify_many(tasks, workers=workers, should_stop=should_stop)
    for outcome in outcomes:
        grade = outcome.grade
        if runs is not None:
            runs[outcome.proposal_id] = outcome.run
        done[outcome.proposal_id] = _graded(
            by_id[outcome.proposal_id], outcome.run.ok, outcome.reward.total,
            grade.span_f1 if grade is not None else None, outcome.run.error,
        )  # fmt: skip
        if on_progress is not None:
            on_progress(len(done))
    for item in items:
        if item["tool"] == PLAN_TOOL:
            if should_stop is not None and should_stop():
                break
            done[item["id"]] = _verify_plan(item, timeout_s)
            if on_progress is not None:
                on_progress(len(done))
    if len(done) < len(items):
        return None
    return [done[item["id"]] for item in items]


def export_row(item: Mapping[str, Any]) -> ExportRow:
    """A single-call item as the row the export layouts take: a gold reference call."""
    call_json = json.dumps(item["reference"], sort_keys=True, separators=(",", ":"))
    return ExportRow(
        blueprint_id=item["id"],
        intent=item["intent"],
        intent_hash=sha256_hex(item["intent"]),
        content_hash=sha256_hex(json.dumps(item, sort_keys=True)),
        corpus=item["corpus"],
        language=item["language"],
        tool=item["tool"],
        call_json=call_json,
        call_hash=sha256_hex(call_json),
        raw_text=call_json,
        proposal_id=None,
        action=None,
        engine="templates" if item["source"] == "synthesis" else None,
        model=None,
        grade=None,
        reward=item.get("verified", {}).get("reward"),
        decision=None,
    )
