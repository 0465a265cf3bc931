"""The reward: its components, weights, the PCRE2 rule, plans and clamping."""

from __future__ import annotations

import pytest

from codesearch_core.errors import ErrorKind
from codesearch_core.grading.rewards import (
    DEFAULT_WEIGHTS,
    RewardWeights,
    breaks_pcre2_rule,
    reward,
)
from codesearch_core.models import Finding, Grade, Plan, PlanStep, RunResult, Span
from codesearch_core.tools.schemas import parse_tool_call


def f(path: str, start: int, end: int | None = None, col: int = 1) -> Finding:
    end = start if end is None else end
    return Finding(path, start, col, end, col + 3, 0, 3, "abc")


def s(path: str, start: int, end: int | None = None) -> Span:
    return Span(path, start, start if end is None else end)


RG_LOOKBEHIND = {"name": "ripgrep_search", "arguments": {"pattern": r"(?<=password=)\S+"}}
AG_CALL = {"name": "ast_grep_search", "arguments": {"pattern": "foo($$$A)", "language": "python"}}


def ok_run() -> RunResult:
    return RunResult(ok=True, findings=())


def test_a_perfect_single_call_earns_exactly_one() -> None:
    r = reward(Grade(1.0, 1.0, 1.0, 1.0, 3, 3, 3), parse_tool_call(AG_CALL), ok_run())
    assert r.total == pytest.approx(1.0)
    assert r.components == {
        "R_parse": 1.0,
        "R_find": 1.0,
        "R_scope": 1.0,
        "R_effort": 0.0,
        "R_pcre2_rule": 0.0,
    }


def test_invalid_call_gets_only_a_zero_parse_component() -> None:
    r = reward(Grade(1.0, 1.0, 1.0, 1.0, 1, 1, 1), None, None)
    assert r.total == 0.0
    assert r.components == {"R_parse": 0.0}


def test_reward_is_the_weighted_sum_of_the_components() -> None:
    g = Grade(file_iou=0.5, span_precision=0.5, span_recall=1.0, span_f1=2 / 3, n_predicted=2,
              n_expected=1, n_matched=1)  # fmt: skip
    w = RewardWeights(parse=0.2, find=0.5, scope=0.25, effort=0.1, pcre2_rule=0.4)
    r = reward(g, parse_tool_call(AG_CALL), ok_run(), w)
    assert r.components["R_find"] == pytest.approx(2 / 3)
    assert r.components["R_scope"] == 0.5
    assert r.total == pytest.approx(0.2 + 0.5 * 2 / 3 + 0.25 * 0.5)


def test_look_behind_without_pcre2_is_penalized() -> None:
    call = parse_tool_call(RG_LOOKBEHIND)
    assert breaks_pcre2_rule(call)
    r = reward(Grade(0.0, 0.0, 0.0, 0.0, 0, 1, 0), call, None)
    assert r.components["R_pcre2_rule"] == -1.0
    assert r.total == pytest.approx(DEFAULT_WEIGHTS.parse - DEFAULT_WEIGHTS.pcre2_rule)


def test_look_behind_with_pcre2_is_not_penalized() -> None:
    call = parse_tool_call(
        {"name": "ripgrep_search", "arguments": {"pattern": r"(?<=password=)\S+", "pcre2": True}}
    )
    assert not breaks_pcre2_rule(call)
    assert reward(None, call, None).components["R_pcre2_rule"] == 0.0


def test_back_reference_without_pcre2_is_penalized_but_a_fixed_string_is_not() -> None:
    backref = {"name": "ripgrep_search", "arguments": {"pattern": r"(\w+) \1"}}
    literal = {
        "name": "ripgrep_search",
        "arguments": {"pattern": r"(\w+) \1", "fixed_strings": True},
    }
    assert breaks_pcre2_rule(parse_tool_call(backref))
    assert not breaks_pcre2_rule(parse_tool_call(literal))


def test_a_run_refused_for_pcre2_is_penalized() -> None:
    run = RunResult(ok=False, findings=(), error_kind=ErrorKind.PCRE2_REQUIRED, error="needs -P")
    call = parse_tool_call({"name": "ripgrep_search", "arguments": {"pattern": "x"}})
    assert reward(None, call, run).components["R_pcre2_rule"] == -1.0


def test_a_failed_run_scores_no_find_and_no_scope_even_with_a_grade() -> None:
    run = RunResult(ok=False, findings=(), error_kind=ErrorKind.TIMEOUT, error="timed out")
    r = reward(Grade(1.0, 1.0, 1.0, 1.0, 1, 1, 1), parse_tool_call(AG_CALL), run)
    assert (r.components["R_find"], r.components["R_scope"]) == (0.0, 0.0)
    assert r.total == pytest.approx(DEFAULT_WEIGHTS.parse)


def test_each_extra_plan_step_costs_effort() -> None:
    call = parse_tool_call(AG_CALL)
    rg_call = parse_tool_call({"name": "ripgrep_search", "arguments": {"pattern": "foo"}})
    plan = Plan((PlanStep(rg_call), PlanStep(call, restrict_to_previous=True)))
    perfect = Grade(1.0, 1.0, 1.0, 1.0, 1, 1, 1)
    r = reward(perfect, plan, ok_run())
    assert r.components["R_effort"] == -1.0
    assert r.total == pytest.approx(1.0 - DEFAULT_WEIGHTS.effort)
    single_step = reward(perfect, Plan((PlanStep(call),)), ok_run())
    assert single_step.components["R_effort"] == 0.0


def test_a_plan_step_that_breaks_the_pcre2_rule_is_penalized() -> None:
    plan = Plan((PlanStep(parse_tool_call(AG_CALL)), PlanStep(parse_tool_call(RG_LOOKBEHIND))))
    assert reward(None, plan, None).components["R_pcre2_rule"] == -1.0


def test_total_is_clamped_to_minus_one_one() -> None:
    heavy = RewardWeights(parse=0.0, find=0.0, scope=0.0, effort=1.0, pcre2_rule=5.0)
    call = parse_tool_call(RG_LOOKBEHIND)
    plan = Plan((PlanStep(call), PlanStep(call), PlanStep(call)))
    assert reward(None, plan, None, heavy).total == -1.0
    generous = RewardWeights(parse=1.0, find=1.0, scope=1.0)
    assert (
        reward(
            Grade(1.0, 1.0, 1.0, 1.0, 1, 1, 1), parse_tool_call(AG_CALL), ok_run(), generous
        ).total
        == 1.0
    )
