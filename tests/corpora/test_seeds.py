"""The shipped seed blueprints: each reference call, run with the real tools, finds exactly its
expected spans; and the set as a whole covers the languages, tools and traps it promises."""

from __future__ import annotations

from collections import Counter

import pytest

from codesearch_core import config
from codesearch_core.corpora.blueprints import check_expected_files, load_seed_blueprints
from codesearch_core.corpora.corpus import corpus_root
from codesearch_core.grading.spans import diff_findings, grade
from codesearch_core.models import Blueprint, ToolName
from codesearch_core.tools.runner import run_tool_call

SEEDS = load_seed_blueprints()


@pytest.mark.parametrize("bp", SEEDS, ids=[bp.id for bp in SEEDS])
def test_reference_call_reproduces_the_expected_spans_exactly(bp: Blueprint) -> None:
    run = run_tool_call(bp.reference_call, corpus_root(bp.corpus))
    assert run.ok, f"{bp.id}: {run.error_kind}: {run.error}"
    assert not run.truncated
    g = grade(run.findings, bp.expected, line_tolerance=0)
    d = diff_findings(run.findings, bp.expected, line_tolerance=0)
    assert d.misses == ()
    assert d.extras == ()
    assert (g.span_f1, g.file_iou) == (1.0, 1.0)


def test_there_are_at_least_thirty_seeds() -> None:
    assert len(SEEDS) >= 30


def test_seeds_cover_at_least_six_languages_and_both_tools() -> None:
    code_languages = {bp.language for bp in SEEDS} - {"text"}
    assert len(code_languages) >= 6
    tools = Counter(bp.tool for bp in SEEDS)
    assert tools[ToolName.AST_GREP] >= 10
    assert tools[ToolName.RIPGREP] >= 10


def test_seed_ids_and_content_hashes_are_unique() -> None:
    assert len({bp.id for bp in SEEDS}) == len(SEEDS)
    assert len({bp.content_hash for bp in SEEDS}) == len(SEEDS)


def test_every_seed_expects_something_in_files_that_exist() -> None:
    for bp in SEEDS:
        assert bp.expected, bp.id
        assert check_expected_files(bp, config.corpora_dir() / bp.corpus) == [], bp.id


def test_seeds_include_the_adversarial_cases_of_the_original_sketch() -> None:
    tags = Counter(tag for bp in SEEDS for tag in bp.tags)
    for tag in (
        "adversarial:structure-vs-text",
        "adversarial:pcre2",
        "adversarial:type-filter",
        "adversarial:unicode",
    ):
        assert tags[tag] >= 2, tag
    by_id = {bp.id: bp for bp in SEEDS}
    lookbehind = by_id["webshop-password-values-lookbehind"].reference_call.arguments
    assert (lookbehind["pattern"], lookbehind["pcre2"]) == (r"(?<=password=)\S+", True)
    assert by_id["telemetry-c-printf-text-type-filter"].reference_call.arguments["file_types"] == [
        "c"
    ]


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
