"""The scalar training reward built from a grade.

Reward
------
`reward()` returns `Reward(total, components)` with these components:

- `R_parse`: 1 when the call (or plan) parsed and validated, else 0. An invalid call gets only this
  component (0), so its total is 0.
- `R_find`: span F1 (0 when the run failed), coverage-weighted by default (`grading.spans`): a
  call that touches only the first line of each expected construct earns little of it.
- `R_scope`: file IoU (0 when the run failed).
- `R_effort`: `-(number_of_calls - 1)`: a single call is not penalized, each extra plan step costs 1,
  and so does each call a model's answer wrote beyond the one that is run (`calls_made`): an RL
  policy gets no free tries by writing several calls in one answer.
- `R_pcre2_rule`: -1 when any ripgrep pattern needs PCRE2 (look-around, back-reference) but the call
  did not set `pcre2: true` (or the run failed with `pcre2_required`), else 0.

    total = clamp(w.parse·R_parse + w.find·R_find + w.scope·R_scope
                  + w.effort·R_effort + w.pcre2_rule·R_pcre2_rule, -1, 1)

with default weights parse 0.1, find 0.6, scope 0.3, effort 0.05, pcre2_rule 0.5: a perfect single
call earns exactly 1.0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from codesearch_core.errors import ErrorKind
from codesearch_core.grading.spans import DEFAULT_MATCHING, Matching, grade
from codesearch_core.models import Grade, Plan, Reward, RunResult, Span, ToolCall, ToolName
from codesearch_core.tools import requires_pcre2


@dataclass(frozen=True, slots=True)
class RewardWeights:
    """Weights of the reward components; see the module docstring for the formula."""

    parse: float = 0.1
    find: float = 0.6
    scope: float = 0.3
    effort: float = 0.05
    pcre2_rule: float = 0.5


DEFAULT_WEIGHTS: Final = RewardWeights()


def _calls(call: ToolCall | Plan) -> tuple[ToolCall, ...]:
    return (call,) if isinstance(call, ToolCall) else tuple(step.call for step in call.steps)


def breaks_pcre2_rule(call: ToolCall | Plan) -> bool:
    """True when a ripgrep pattern needs PCRE2 but the call did not ask for it."""
    for c in _calls(call):
        args = c.arguments
        if c.name is not ToolName.RIPGREP or args.get("pcre2") or args.get("fixed_strings"):
            continue
        if requires_pcre2(str(args.get("pattern", ""))):
            return True
    return False


def reward(
    grade: Grade | None,
    call: ToolCall | Plan | None,
    run: RunResult | None,
    weights: RewardWeights = DEFAULT_WEIGHTS,
    *,
    calls_made: int = 1,
) -> Reward:
    """The scalar training reward for one answer (a call or a plan) and its components.

    `call` is None when the model's output did not parse or validate. `grade` is the grade of the
    run's findings against the blueprint's expected spans; None (or a failed `run`) scores no find
    and no scope. `calls_made`: the calls the answer wrote, when it wrote more than `call` holds
    (only the first was run).
    """
    if call is None:
        return Reward(total=0.0, components={"R_parse": 0.0})
    run_failed = run is not None and not run.ok
    found = grade is not None and not run_failed
    r_find = grade.span_f1 if found and grade is not None else 0.0
    r_scope = grade.file_iou if found and grade is not None else 0.0
    r_effort = float(1 - max(len(_calls(call)), calls_made))
    pcre2_failure = run is not None and run.error_kind is ErrorKind.PCRE2_REQUIRED
    r_pcre2 = -1.0 if pcre2_failure or breaks_pcre2_rule(call) else 0.0
    components = {
        "R_parse": 1.0,
        "R_find": r_find,
        "R_scope": r_scope,
        "R_effort": r_effort,
        "R_pcre2_rule": r_pcre2,
    }
    total = (
        weights.parse * 1.0
        + weights.find * r_find
        + weights.scope * r_scope
        + weights.effort * r_effort
        + weights.pcre2_rule * r_pcre2
    )
    return Reward(total=min(1.0, max(-1.0, total)), components=components)


def score(
    run: RunResult,
    call: ToolCall | Plan | None,
    expected: Sequence[Span],
    *,
    matching: Matching = DEFAULT_MATCHING,
    calls_made: int = 1,
) -> tuple[Grade | None, Reward]:
    """The grade and reward of a run. Only a run that completed is graded: a failed run's findings
    are not trustworthy, and grading "nothing found" against a blueprint that expects nothing would
    call a timeout perfect. `calls_made`: see `reward`."""
    g = grade(run.findings, expected, matching=matching) if run.ok else None
    return g, reward(g, call, run, calls_made=calls_made)
