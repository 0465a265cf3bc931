"""Evaluating an engine on a blueprint set: every answer executed and graded, summarized overall,
per tag and per language (like BFCL's categories), stored as an eval run, compared item by item.

An eval run lives in the store (`store.evals`: tables `eval_runs` and `eval_items`), with each
blueprint's answers (raw text, the repaired call, its reward, span F1, tool choice, and what the
call found), so runs made on different days can be set side by side and any answer opened in the
review card's diff view without running anything again. Runs the first version of `codesearch
eval` wrote as JSON files are imported once with `import_json_runs` (`codesearch eval
--import-json DIR`); the files are left where they are.

Summary metrics, over the blueprints of the set (an answer-less blueprint counts against pass@k):
- `mean_reward` and `mean_span_f1`: over every answer (a failed run or no call counts 0 F1);
- `tool_accuracy`: answers whose tool (ast-grep vs ripgrep) is the reference call's;
- `pcre2_violations`: answers using a look-around or back-reference without `pcre2`;
- `parse_rate` / `repair_rate`: answers that held a valid call / that needed a repair for it;
- `unparsed`: answers with no valid call (an empty answer is one), each scored 0;
- `pass_at_k`: blueprints where one of the k answers earned at least `PASS_REWARD`.
The summary's `left_out` says which blueprints of the set were not asked (plans), how many and why.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from codesearch_core.corpora import check_search_environment
from codesearch_core.engines import Engine, ProgressFn, PromptConfig, SamplingSettings
from codesearch_core.errors import (
    ENVIRONMENT_ERROR_KINDS,
    EngineError,
    EnvironmentFault,
    InputFileError,
)
from codesearch_core.export.observe import Observer
from codesearch_core.grading import score
from codesearch_core.models import Blueprint, Proposal
from codesearch_core.store import PASS_REWARD, EvalAnswer, EvalItem, EvalRun, Store

METRICS: Final = (
    "mean_reward",
    "mean_span_f1",
    "tool_accuracy",
    "pcre2_violations",
    "parse_rate",
    "repair_rate",
    "pass_at_k",
)
#: Why `evaluate` leaves plan blueprints out (`left_out` in a run's summary; the CLI says it).
PLAN_LEFT_OUT: Final = "a plan's reference is several calls, which one call cannot answer"
#: Findings kept per answer for the diff view; a call that finds thousands of lines is wrong
#: already, and its first findings show how.
MAX_KEPT_FINDINGS: Final = 200


def _answer(proposal: Proposal, bp: Blueprint, observer: Observer) -> EvalAnswer:
    if proposal.call is None:
        return EvalAnswer(proposal.raw_text, None, False, 0.0, 0.0, False, False, proposal.error)
    run = observer.run(proposal.call, bp.corpus)
    if run.error_kind in ENVIRONMENT_ERROR_KINDS:
        # The machine failed, not the model: scoring it would store a run of the machine's zeros.
        raise EnvironmentFault(f"{run.error} (the eval run stopped; nothing was stored)")
    grade, reward = score(run, proposal.call, bp.expected)
    return EvalAnswer(
        raw_text=proposal.raw_text,
        call=proposal.call.to_dict(),
        repaired=bool(proposal.repairs),
        reward=reward.total,
        span_f1=grade.span_f1 if grade is not None else 0.0,
        tool_ok=proposal.call.name is bp.reference_call.name,
        pcre2_violation=reward.components.get("R_pcre2_rule", 0.0) < 0,
        error=run.error,
        findings=run.findings[:MAX_KEPT_FINDINGS],
        truncated=run.truncated or len(run.findings) > MAX_KEPT_FINDINGS,
    )


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarize(items: Iterable[EvalItem]) -> dict[str, Any]:
    items = list(items)
    answers = [a for item in items for a in item.answers]
    return {
        "blueprints": len(items),
        "answers": len(answers),
        "mean_reward": _mean([a.reward for a in answers]),
        "mean_span_f1": _mean([a.span_f1 for a in answers]),
        "tool_accuracy": _mean([float(a.tool_ok) for a in answers]),
        "pcre2_violations": sum(a.pcre2_violation for a in answers),
        "parse_rate": _mean([float(a.call is not None) for a in answers]),
        # Answers without a valid call (an empty answer too): scored 0, kept, and counted here.
        "unparsed": sum(a.call is None for a in answers),
        "repair_rate": _mean([float(a.repaired) for a in answers]),
        "pass_at_k": _mean([float(item.best_reward >= PASS_REWARD) for item in items]),
    }


def full_summary(items: Sequence[EvalItem]) -> dict[str, Any]:
    """Overall, per tag and per language."""
    by_tag: dict[str, list[EvalItem]] = defaultdict(list)
    by_language: dict[str, list[EvalItem]] = defaultdict(list)
    for item in items:
        for tag in item.tags:
            by_tag[tag].append(item)
        by_language[item.language].append(item)
    return {
        "overall": summarize(items),
        "by_tag": {tag: summarize(group) for tag, group in sorted(by_tag.items())},
        "by_language": {lang: summarize(group) for lang, group in sorted(by_language.items())},
    }


def left_out(blueprints: Sequence[Blueprint]) -> dict[str, dict[str, Any]]:
    """What `evaluate` leaves out of a set, by reason, with the number of blueprints (the shape of
    an export manifest's `extra.skipped`); empty when it takes every blueprint."""
    plans = sum(bp.plan is not None for bp in blueprints)
    return {"plan": {"blueprints": plans, "reason": PLAN_LEFT_OUT}} if plans else {}


def _no_answer(proposals: Sequence[Proposal]) -> str | None:
    """Why the engine answered nothing at all (every request failed before any text came back),
    or None: an engine that cannot answer is an error, not a run of zeros."""
    if any(p.raw_text or p.call is not None for p in proposals):
        return None
    first = next((p.error for p in proposals if p.error), "")
    return first or "it returned no answers"


def evaluate(
    engine: Engine,
    blueprints: Sequence[Blueprint],
    *,
    n: int = 1,
    label: str = "",
    settings: SamplingSettings | None = None,
    prompt: PromptConfig | None = None,
    on_progress: ProgressFn | None = None,
) -> EvalRun:
    """Ask `engine` for `n` answers per blueprint, run and grade each (on a few threads: each run
    is a child process); plans are left out (one call cannot answer them) and counted in the
    summary's `left_out`. An empty set is an InputFileError and an engine that answers nothing an
    EngineError, never an empty run; a missing tool or corpus is an EnvironmentFault before the
    engine is asked (and should a tool go missing during the runs, then), never a score."""
    single = [bp for bp in blueprints if bp.plan is None]
    if not single:
        plans = len(blueprints) - len(single)
        raise InputFileError(
            "nothing to evaluate: the blueprint set is empty"
            if not blueprints
            else f"nothing to evaluate: the set's {plans} blueprint(s) are all plans, which one "
            "call cannot answer"
        )
    check_search_environment(bp.corpus for bp in single)
    proposals = engine.propose(
        single, n=n, settings=settings, prompt=prompt, on_progress=on_progress
    )
    why = _no_answer(proposals)
    if why is not None:
        raise EngineError(f"{engine.name}:{engine.model} gave no answer to any blueprint: {why}")
    by_bp: dict[str, list[Proposal]] = defaultdict(list)
    for proposal in proposals:
        by_bp[proposal.blueprint_id].append(proposal)
    observer = Observer()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        jobs = {
            bp.id: [pool.submit(_answer, p, bp, observer) for p in by_bp.get(bp.id, [])[:n]]
            for bp in single
        }
        items = tuple(
            EvalItem(
                blueprint_id=bp.id,
                tags=tuple(bp.tags),
                language=bp.language,
                reference_tool=bp.reference_call.name.value,
                answers=tuple(job.result() for job in jobs[bp.id]),
                corpus=bp.corpus,
                blueprint=bp,
            )
            for bp in single
        )
    created = datetime.now(UTC)
    return EvalRun(
        run_id=f"{created:%Y%m%d-%H%M%S-%f}-{engine.name}",
        engine=engine.name,
        model=engine.model,
        n=n,
        blueprints=label,
        created_at=created.replace(tzinfo=None).isoformat(),
        items=items,
        summary={**full_summary(items), "left_out": left_out(blueprints)},
    )


# --- the first version's JSON files --------------------------------------------------------------


def _legacy_item(d: dict[str, Any]) -> EvalItem:
    return EvalItem(
        blueprint_id=d["blueprint_id"],
        tags=tuple(d["tags"]),
        language=d["language"],
        reference_tool=d["reference_tool"],
        answers=tuple(EvalAnswer.from_dict(a) for a in d["answers"]),
        corpus=str(d.get("corpus", "")),
    )


def load_json_run(path: Path) -> EvalRun:
    """A run as the first `codesearch eval` saved it (`<run_id>.json`)."""
    d = json.loads(path.read_text(encoding="utf-8"))
    return EvalRun(
        run_id=d["run_id"],
        engine=d["engine"],
        model=d["model"],
        n=d["n"],
        blueprints=d["blueprints"],
        created_at=d["created_at"],
        items=tuple(_legacy_item(i) for i in d["items"]),
        summary=d["summary"],
    )


@dataclass(frozen=True, slots=True)
class JsonImport:
    imported: tuple[str, ...]
    already: tuple[str, ...]
    unreadable: tuple[str, ...]


def import_json_runs(store: Store, folder: Path) -> JsonImport:
    """Store every run saved as JSON in `folder` that the store lacks (by run id; importing twice
    adds nothing). A file that is not such a run is named in `unreadable`, not fatal."""
    if not folder.is_dir():
        raise InputFileError(f"{folder} is not a folder of eval runs")
    imported: list[str] = []
    already: list[str] = []
    unreadable: list[str] = []
    for path in sorted(folder.glob("*.json")):
        try:
            run = load_json_run(path)
        except (OSError, ValueError, KeyError, TypeError):
            unreadable.append(path.name)
            continue
        (imported if store.evals.save(run) else already).append(run.run_id)
    return JsonImport(tuple(imported), tuple(already), tuple(unreadable))


# --- comparing -----------------------------------------------------------------------------------


def compare(a: EvalRun, b: EvalRun) -> list[dict[str, Any]]:
    """The blueprints both runs answered, with each run's best reward, the change (b - a) and
    its verdict (better, worse, same), worst first."""
    best_b = {item.blueprint_id: item.best_reward for item in b.items}
    rows = []
    for item in a.items:
        if item.blueprint_id not in best_b:
            continue
        change = best_b[item.blueprint_id] - item.best_reward
        verdict = "better" if change > 1e-9 else "worse" if change < -1e-9 else "same"
        rows.append(
            {
                "blueprint_id": item.blueprint_id,
                "a": item.best_reward,
                "b": best_b[item.blueprint_id],
                "change": change,
                "verdict": verdict,
            }
        )
    return sorted(rows, key=lambda r: (r["change"], r["blueprint_id"]))
