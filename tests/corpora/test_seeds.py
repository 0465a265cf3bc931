"""The shipped seed blueprints: each reference call, run with the real tools, finds exactly its
expected spans; and the set as a whole covers the languages, tools and traps it promises."""

from __future__ import annotations

from collections import Counter

import pytest

from codesearch_core import config
from codesearch_core.corpora.blueprints import check_expected_files, load_seed_blueprints
from codesearch_core.corpora.corpus import corpus_root
from codesearch_core.corpora.seed_rules import CATEGORY_TAGS, check_seed_file
from codesearch_core.grading.spans import diff_findings, grade
from codesearch_core.models import Blueprint, RunResult, Span, ToolName
from codesearch_core.tools.runner import run_plan, run_tool_call

SEEDS = load_seed_blueprints()


def _run(bp: Blueprint) -> RunResult:
    root = corpus_root(bp.corpus)
    return run_plan(bp.plan, root) if bp.plan else run_tool_call(bp.reference_call, root)


@pytest.mark.parametrize("bp", SEEDS, ids=[bp.id for bp in SEEDS])
def test_reference_call_reproduces_the_expected_spans_exactly(bp: Blueprint) -> None:
    run = _run(bp)
    assert run.ok, f"{bp.id}: {run.error_kind}: {run.error}"
    assert not run.truncated
    g = grade(run.findings, bp.expected, line_tolerance=0)
    d = diff_findings(run.findings, bp.expected, line_tolerance=0)
    assert d.misses == ()
    assert d.extras == ()
    assert (g.span_f1, g.file_iou) == (1.0, 1.0)


def test_there_are_at_least_120_seeds_over_14_languages_and_both_tools() -> None:
    assert len(SEEDS) >= 120
    assert len({bp.language for bp in SEEDS}) >= 14
    tools = Counter(call.name for bp in SEEDS for call in bp.reference_calls)
    assert tools[ToolName.AST_GREP] >= 30
    assert tools[ToolName.RIPGREP] >= 30


def test_seed_ids_and_content_hashes_are_unique() -> None:
    assert len({bp.id for bp in SEEDS}) == len(SEEDS)
    assert len({bp.content_hash for bp in SEEDS}) == len(SEEDS)


def test_every_seed_keeps_the_seed_rules() -> None:
    # Tags from the vocabulary, counter-calls on adversarial seeds, spans inside pinned files.
    _, problems = check_seed_file(config.seeds_file())
    assert [str(p) for p in problems] == []
    for bp in SEEDS:
        assert check_expected_files(bp, config.corpora_dir() / bp.corpus) == [], bp.id


EMPTY = [bp for bp in SEEDS if "empty-answer" in bp.tags]


@pytest.mark.parametrize("bp", EMPTY, ids=[bp.id for bp in EMPTY])
def test_an_empty_answer_seed_grades_one_for_nothing_and_zero_for_any_finding(
    bp: Blueprint,
) -> None:
    assert bp.expected == ()
    assert grade([], bp.expected).span_f1 == 1.0
    # Any finding at all, even one of the decoys a careless search returns, grades 0.
    for call in [c.call for c in bp.counter_calls] or [bp.reference_call]:
        found = run_tool_call(call, corpus_root(bp.corpus)).findings
        assert grade(found[:1] or [Span("README.md", 1, 1)], bp.expected).span_f1 == 0.0


def test_every_category_has_eight_seeds_and_there_are_empty_answers_and_plans() -> None:
    tags = Counter(tag for bp in SEEDS for tag in bp.tags)
    for tag in CATEGORY_TAGS:
        if tag.startswith("adversarial:"):
            assert tags[tag] >= 8, tag
    assert tags["empty-answer"] >= 12
    assert tags["plan"] >= 12
    assert all(bp.plan is not None for bp in SEEDS if "plan" in bp.tags)


def test_seeds_use_the_rule_form_and_the_ripgrep_options() -> None:
    ast_rules = [bp for bp in SEEDS if "rule" in bp.reference_call.arguments]
    assert len(ast_rules) >= 5
    rg_options = {
        key for bp in SEEDS if bp.tool is ToolName.RIPGREP for key in bp.reference_call.arguments
    }
    assert {
        "word",
        "fixed_strings",
        "case_sensitive",
        "smart_case",
        "globs",
        "paths",
        "multiline",
        "pcre2",
        "file_types",
    } <= rg_options
