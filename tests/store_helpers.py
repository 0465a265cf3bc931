"""Builders for store tests: small, valid domain records with readable defaults."""

from __future__ import annotations

from typing import Any

from codesearch_core.errors import ErrorKind
from codesearch_core.models import (
    Blueprint,
    Difficulty,
    Finding,
    Grade,
    Proposal,
    Reward,
    RunResult,
    Span,
)
from codesearch_core.tools.schemas import parse_tool_call


def rg_call(pattern: str, **extra: Any) -> Any:
    return parse_tool_call({"name": "ripgrep_search", "arguments": {"pattern": pattern, **extra}})


def sg_call(pattern: str, language: str = "python") -> Any:
    return parse_tool_call(
        {"name": "ast_grep_search", "arguments": {"pattern": pattern, "language": language}}
    )


def blueprint(
    n: int = 0,
    *,
    tool: str = "ast_grep_search",
    language: str = "python",
    tags: tuple[str, ...] = ("structure",),
    intent: str | None = None,
    corpus: str = "fixtures",
) -> Blueprint:
    call = sg_call(f"handler_{n}($$$)", language) if tool == "ast_grep_search" else rg_call(f"h{n}")
    return Blueprint(
        id=f"bp-{n:03d}",
        intent=intent or f"Find the calls to handler_{n}",
        reference_call=call,
        corpus=corpus,
        expected=(Span("src/app.py", n + 1, n + 2),),
        language=language,
        tags=tags,
        difficulty=Difficulty.MEDIUM,
    )


def proposal(
    bp: Blueprint,
    pattern: str = "handler",
    *,
    engine: str = "mutations",
    model: str = "none",
    mutation_kind: str | None = None,
    prompt_tokens: int | None = None,
) -> Proposal:
    call = rg_call(pattern)
    return Proposal(
        blueprint_id=bp.id,
        engine=engine,
        model=model,
        raw_text=call.to_json(),
        call=call,
        valid=True,
        mutation_kind=mutation_kind,
        prompt_tokens=prompt_tokens,
        sampling={"temperature": 0.7},
    )


def invalid_proposal(bp: Blueprint, raw_text: str = '{"name": "ripgrep_search", "arg') -> Proposal:
    return Proposal(
        blueprint_id=bp.id,
        engine="vllm",
        model="tiny",
        raw_text=raw_text,
        call=None,
        valid=False,
        error="not JSON: output cut at max_tokens",
        finish_reason="length",
    )


def finding(path: str = "src/app.py", line: int = 1, text: str = "handler(x)") -> Finding:
    return Finding(path, line, 1, line, len(text) + 1, 0, len(text), text, "python")


def run_ok(*findings: Finding) -> RunResult:
    return RunResult(ok=True, findings=tuple(findings), return_code=0, elapsed_s=0.01)


def run_failed() -> RunResult:
    return RunResult(
        ok=False,
        findings=(),
        return_code=2,
        stderr="regex parse error",
        error_kind=ErrorKind.INVALID_PATTERN,
        error="the regex does not compile",
    )


def grade(f1: float) -> Grade:
    return Grade(
        file_iou=1.0,
        span_precision=f1,
        span_recall=f1,
        span_f1=f1,
        n_predicted=2,
        n_expected=2,
        n_matched=round(2 * f1),
    )


def reward(total: float = 0.5) -> Reward:
    return Reward(total, {"R_parse": 1.0, "R_find": total})


def executed(store: Any, ids: Any, f1: float = 1.0) -> None:
    """Record an ok run and a grade for each proposal id: only a call that ran can be accepted."""
    store.record_executions_and_grades(
        [(pid, run_ok(finding()), grade(f1), reward(f1)) for pid in ids]
    )
