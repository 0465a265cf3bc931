"""The seed audit: counter-calls and automatic baselines, run with the real tools and scored."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesearch_core.corpora import blueprint_from_dict
from codesearch_core.models import Blueprint, Span, ToolName
from codesearch_core.verify.audit import (
    audit_seed,
    baseline_calls,
    first_line_spans,
    keyword_pieces,
    mostly_multiline,
    summarize,
)


def bp(call: dict[str, object], expected: list[tuple[int, int]], **extra: object) -> Blueprint:
    return blueprint_from_dict(
        {
            "id": "tiny-seed",
            "intent": "Find the calls to handler",
            "corpus": "tiny",
            "language": "python",
            "reference_call": call,
            "expected": [{"path": "app.py", "start_line": a, "end_line": b} for a, b in expected],
            **extra,
        }
    )


SG_CALL = {
    "name": "ast_grep_search",
    "arguments": {"pattern": "handler($$$A)", "language": "python"},
}


def test_keyword_pieces_are_the_literal_words_of_every_pattern() -> None:
    rule_call = {
        "name": "ast_grep_search",
        "arguments": {
            "language": "typescript",
            "rule": {
                "pattern": "DB.query($$$ARGS)",
                "inside": {"pattern": "async function $F($$$P) { $$$B }", "stopBy": "end"},
            },
        },
    }
    assert keyword_pieces(bp(rule_call, [(1, 1)])) == ["DB.query"]
    assert keyword_pieces(bp(SG_CALL, [(1, 1)])) == ["handler"]


def test_a_rule_without_a_pattern_gets_keywords_from_its_kinds_and_regex_literals() -> None:
    # {kind: decorated_definition, has: {kind: decorator, regex: "contextmanager$"}}: no pattern,
    # so the keywords are the regex's literal word and the kind names that name text.
    rule_call = {
        "name": "ast_grep_search",
        "arguments": {
            "language": "python",
            "rule": {
                "kind": "decorated_definition",
                "has": {"kind": "decorator", "regex": "^@(contextlib\\.)?contextmanager$"},
            },
        },
    }
    assert keyword_pieces(bp(rule_call, [(1, 1)])) == ["contextlib", "contextmanager", "decorator"]
    # Escapes of classes (\s, \b) and character classes are syntax, not words; the kind's keyword
    # is kept even though a bare keyword from a pattern is not.
    impl_call = {
        "name": "ast_grep_search",
        "arguments": {
            "language": "rust",
            "rule": {"kind": "impl_item", "regex": "^impl[^{]*\\sfor\\s"},
        },
    }
    assert keyword_pieces(bp(impl_call, [(1, 1)])) == ["impl"]
    class_call = {
        "name": "ast_grep_search",
        "arguments": {"language": "java", "rule": {"kind": "class_declaration"}},
    }
    (call,) = [c for kind, _, c, _ in baseline_calls(bp(class_call, [(1, 1)])) if kind == "keyword"]
    assert call.arguments == {"pattern": "class", "fixed_strings": True, "file_types": ["java"]}


def test_a_ripgrep_seed_gets_one_drop_flag_baseline_per_option() -> None:
    call = {
        "name": "ripgrep_search",
        "arguments": {"pattern": "handler", "word": True, "file_types": ["py"], "paths": ["."]},
    }
    labels = [(kind, label) for kind, label, _, _ in baseline_calls(bp(call, [(1, 1)]))]
    assert labels == [("drop-flag", "file_types"), ("drop-flag", "paths"), ("drop-flag", "word")]


def test_the_keyword_baseline_of_a_multiline_call_earns_only_its_first_line(corpus: Path) -> None:
    # handler( ... ) spans lines 8-10; `rg -F handler -t py` finds line 8 and three other lines.
    audit = audit_seed(bp(SG_CALL, [(8, 10)]))
    assert audit.reference == 1.0
    (keyword,) = [b for b in audit.baselines if b.kind == "keyword"]
    assert keyword.call is not None and keyword.call.name is ToolName.RIPGREP
    # Precision (1/3)/4, recall 1/3 -> F1 2/15; file IoU 1: 0.1 + 0.6 * 2/15 + 0.3 = 0.48.
    assert keyword.reward == pytest.approx(0.48)
    first = audit.first_line
    assert first is not None and first == pytest.approx(0.1 + 0.6 / 3 + 0.3)


def test_a_counter_call_scoring_above_the_line_makes_the_seed_weak(corpus: Path) -> None:
    same = {"call": SG_CALL, "why": "the reference itself"}
    weak = audit_seed(bp(SG_CALL, [(8, 10)], counter_calls=[same]))
    assert weak.weak and weak.counter_best == 1.0
    summary = summarize([weak, audit_seed(bp(SG_CALL, [(8, 10)]))])
    assert summary.weak == ("tiny-seed",) and not summary.passed
    assert summary.ast_grep_seeds == 2 and summary.keyword_reaching == 0


def test_first_line_baselines_are_for_seeds_of_long_spans() -> None:
    assert mostly_multiline([Span("a", 1, 3), Span("a", 9, 12), Span("a", 20, 20)])
    assert not mostly_multiline([Span("a", 1, 2), Span("a", 5, 6)])  # two-line spans
    assert not mostly_multiline([])
    assert first_line_spans([Span("a", 4, 9)]) == [Span("a", 4, 4)]


def test_a_plan_seed_is_run_as_a_plan_and_each_step_alone_is_a_baseline(corpus: Path) -> None:
    # Step 1 narrows to files that define handler; step 2 finds its multi-line call there.
    plan = {
        "steps": [
            {"call": {"name": "ripgrep_search", "arguments": {"pattern": "^def handler"}}},
            {"call": SG_CALL, "restrict_to_previous": True},
        ]
    }
    audit = audit_seed(bp(plan, [(8, 10)]))
    assert audit.reference == pytest.approx(0.95)  # perfect, less 0.05 for the second call
    steps = {b.label: b.reward for b in audit.baselines if b.kind == "step"}
    assert set(steps) == {"step 1 alone", "step 2 alone"}
    assert steps["step 1 alone"] < 0.7
    # Here the narrowing changes nothing, so one step does the plan's work: a weak plan seed.
    assert steps["step 2 alone"] == 1.0 and audit.weak
