"""The unit of verification: execute and grade one proposal, as plain data in and plain data out.

`verify_one` is a pure function from picklable data (`VerifyTask`) to plain data (`VerifyOutcome`),
so the same function runs inline, in a local process pool (`verify.pool.verify_many`) or as Ray
tasks (`verify.ray_backend.verify_many_ray`). Workers import only this module's needs: no store, no
DuckDB, no pandas.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from codesearch_core.corpora import corpus_root
from codesearch_core.errors import CorpusError, ErrorKind, ToolCallError
from codesearch_core.grading import score
from codesearch_core.models import Grade, Reward, RunResult, Span, ToolCall
from codesearch_core.tools import (
    DEFAULT_MAX_FINDINGS,
    DEFAULT_TIMEOUT_S,
    parse_tool_call,
    run_tool_call,
)


@dataclass(frozen=True, slots=True)
class VerifyTask:
    """One proposal to execute and grade, as plain data that crosses process and machine boundaries.

    `call_json` is the proposal's call as canonical JSON, or None for a proposal without a valid call
    (it is graded with R_parse = 0 and nothing is run). `corpus_root` is resolved by the caller; a
    worker on a machine where that directory does not exist resolves `corpus` by name instead.
    """

    proposal_id: str
    call_json: str | None
    corpus: str
    corpus_root: str
    expected: tuple[Span, ...]
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_findings: int = DEFAULT_MAX_FINDINGS
    invalid_reason: str = ""


@dataclass(frozen=True, slots=True)
class VerifyOutcome:
    """What verifying one proposal produced: the execution, its grade and its reward.

    `grade` is None when the run did not complete (invalid call, tool error, timeout).
    """

    proposal_id: str
    run: RunResult
    grade: Grade | None
    reward: Reward

    @property
    def ok(self) -> bool:
        return self.run.ok


# --- the unit of work ---------------------------------------------------------------------------


def _invalid_run(reason: str) -> RunResult:
    return RunResult(
        ok=False,
        findings=(),
        error_kind=ErrorKind.INVALID_CALL,
        error=reason or "the proposal has no valid tool call",
    )


def _run(call: ToolCall, task: VerifyTask) -> RunResult:
    try:
        return run_tool_call(
            call, Path(task.corpus_root), timeout_s=task.timeout_s, max_findings=task.max_findings
        )
    except CorpusError:
        # On a cluster node the driver's path may not exist; the same corpus is found there by
        # name. (Tried in this order, the usual case costs no second look at the folder.)
        root = corpus_root(task.corpus)
    return run_tool_call(call, root, timeout_s=task.timeout_s, max_findings=task.max_findings)


def verify_one(task: VerifyTask) -> VerifyOutcome:
    """Execute one proposal's call, grade its findings against the expected spans, compute the reward.

    Bad calls, tool errors and timeouts are recorded in the outcome's run, never raised. Only a run
    that completed is graded: a failed run's findings are not trustworthy, and grading "nothing
    found" against a blueprint that expects nothing would call a timeout perfect. A corpus missing
    on this machine raises CorpusError: that is the set-up's fault, not the proposal's.
    """
    call: ToolCall | None = None
    if task.call_json is None:
        run = _invalid_run(task.invalid_reason)
    else:
        try:
            call = parse_tool_call(json.loads(task.call_json))
        except (ToolCallError, ValueError) as err:
            run = _invalid_run(f"the stored call does not validate: {err}")
        else:
            run = _run(call, task)
    return VerifyOutcome(task.proposal_id, run, *score(run, call, task.expected))


def verify_chunk(tasks: Sequence[VerifyTask]) -> list[VerifyOutcome]:
    """Verify several tasks in one worker call (one message each way instead of one per task)."""
    return [verify_one(t) for t in tasks]
