"""Evaluating an engine on a blueprint set: every answer executed and graded, summarized overall,
per tag and per language (like BFCL's categories), saved as an eval run, compared item by item.

An eval run is a JSON file under `evals_dir()` (`<data>/evals`, or `CODESEARCH_EVALS`): it holds
each blueprint's answers (raw text, the repaired call, its reward, span F1, tool choice) and the
summary, so runs made on different days (or machines) can be set side by side without a store.

Summary metrics, over the blueprints with at least one answer:
- `mean_reward` and `mean_span_f1`: over every answer (a failed run or no call counts 0 F1);
- `tool_accuracy`: answers whose tool (ast-grep vs ripgrep) is the reference call's;
- `pcre2_violations`: answers using a look-around or back-reference without `pcre2`;
- `parse_rate` / `repair_rate`: answers that held a valid call / that needed a repair for it;
- `pass_at_k`: blueprints where one of the k answers earned at least `PASS_REWARD`.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from codesearch_core import config
from codesearch_core.engines import Engine
from codesearch_core.errors import CodesearchError, InputFileError
from codesearch_core.export.observe import Observer
from codesearch_core.grading import score
from codesearch_core.models import Blueprint, Proposal

#: An answer this good counts as solving its blueprint (for pass@k).
PASS_REWARD: Final = 0.9
METRICS: Final = (
    "mean_reward",
    "mean_span_f1",
    "tool_accuracy",
    "pcre2_violations",
    "parse_rate",
    "repair_rate",
    "pass_at_k",
)


def evals_dir() -> Path:
    return Path(os.environ.get("CODESEARCH_EVALS", config.data_dir() / "evals"))


@dataclass(frozen=True, slots=True)
class Answer:
    raw_text: str
    call: dict[str, Any] | None
    repaired: bool
    reward: float
    span_f1: float
    tool_ok: bool
    pcre2_violation: bool
    error: str = ""


@dataclass(frozen=True, slots=True)
class EvalItem:
    blueprint_id: str
    tags: tuple[str, ...]
    language: str
    reference_tool: str
    answers: tuple[Answer, ...]

    @property
    def best_reward(self) -> float:
        return max((a.reward for a in self.answers), default=0.0)


@dataclass(frozen=True, slots=True)
class EvalRun:
    run_id: str
    engine: str
    model: str
    n: int
    blueprints: str
    created_at: str
    items: tuple[EvalItem, ...]
    summary: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _answer(proposal: Proposal, bp: Blueprint, observer: Observer) -> Answer:
    if proposal.call is None:
        return Answer(proposal.raw_text, None, False, 0.0, 0.0, False, False, proposal.error)
    run = observer.run(proposal.call, bp.corpus)
    grade, reward = score(run, proposal.call, bp.expected)
    return Answer(
        raw_text=proposal.raw_text,
        call={"name": proposal.call.name.value, "arguments": dict(proposal.call.arguments)},
        repaired=bool(proposal.repairs),
        reward=reward.total,
        span_f1=grade.span_f1 if grade is not None else 0.0,
        tool_ok=proposal.call.name is bp.reference_call.name,
        pcre2_violation=reward.components.get("R_pcre2_rule", 0.0) < 0,
        error=run.error,
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


def evaluate(
    engine: Engine, blueprints: Sequence[Blueprint], *, n: int = 1, label: str = ""
) -> EvalRun:
    """Ask `engine` for `n` answers per blueprint, run and grade each; plans are left out (one
    call cannot answer them). An empty set is an error, not an empty run."""
    single = [bp for bp in blueprints if bp.plan is None]
    if not single:
        raise InputFileError("nothing to evaluate: the blueprint set has no single-call blueprint")
    proposals = engine.propose(single, n=n)
    by_bp: dict[str, list[Proposal]] = defaultdict(list)
    for proposal in proposals:
        by_bp[proposal.blueprint_id].append(proposal)
    observer = Observer()
    items = tuple(
        EvalItem(
            blueprint_id=bp.id,
            tags=tuple(bp.tags),
            language=bp.language,
            reference_tool=bp.reference_call.name.value,
            answers=tuple(_answer(p, bp, observer) for p in by_bp.get(bp.id, [])[:n]),
        )
        for bp in single
    )
    created = datetime.now(UTC)
    run_id = f"{created:%Y%m%d-%H%M%S-%f}-{engine.name}"
    return EvalRun(
        run_id=run_id,
        engine=engine.name,
        model=engine.model,
        n=n,
        blueprints=label,
        created_at=created.isoformat(),
        items=items,
        summary=full_summary(items),
    )


def save_run(run: EvalRun, folder: Path | None = None) -> Path:
    """Write the run as `<folder>/<run_id>.json`, whole or not at all."""
    folder = folder or evals_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{run.run_id}.json"
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(run.to_dict(), fh, ensure_ascii=False, indent=1)
        os.replace(tmp, path)
    except OSError as err:
        raise CodesearchError(f"cannot save the eval run in {folder}: {err.strerror}") from err
    return path


def _item(d: dict[str, Any]) -> EvalItem:
    return EvalItem(
        blueprint_id=d["blueprint_id"],
        tags=tuple(d["tags"]),
        language=d["language"],
        reference_tool=d["reference_tool"],
        answers=tuple(Answer(**a) for a in d["answers"]),
    )


def load_run(path: Path) -> EvalRun:
    d = json.loads(path.read_text(encoding="utf-8"))
    return EvalRun(
        run_id=d["run_id"],
        engine=d["engine"],
        model=d["model"],
        n=d["n"],
        blueprints=d["blueprints"],
        created_at=d["created_at"],
        items=tuple(_item(i) for i in d["items"]),
        summary=d["summary"],
    )


def list_runs(folder: Path | None = None) -> list[EvalRun]:
    """The saved runs, newest first (unreadable files are skipped)."""
    runs = []
    for path in sorted((folder or evals_dir()).glob("*.json"), reverse=True):
        try:
            runs.append(load_run(path))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return runs


def compare(a: EvalRun, b: EvalRun) -> list[dict[str, Any]]:
    """The blueprints both runs answered, with each run's best reward and the change (b - a)."""
    best_b = {item.blueprint_id: item.best_reward for item in b.items}
    rows = [
        {
            "blueprint_id": item.blueprint_id,
            "a": item.best_reward,
            "b": best_b[item.blueprint_id],
            "change": best_b[item.blueprint_id] - item.best_reward,
        }
        for item in a.items
        if item.blueprint_id in best_b
    ]
    return sorted(rows, key=lambda r: (r["change"], r["blueprint_id"]))
