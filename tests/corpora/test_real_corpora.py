"""The seeds on real code (data/seeds/real_corpora.jsonl): pinned snapshots of click 8.1.7 (PyPI
sdist) and express 4.18.2 (npm package), fetched by `.ci/fetch_corpora.sh`, never committed.

The file itself is checked always; everything that runs the tools on the corpora is skipped, with
the command to run, where they have not been fetched (nothing downloads at test time). What runs
is what `codesearch seeds verify --file data/seeds/real_corpora.jsonl` and `codesearch seeds audit
--file ...` run: the seed rules, each reference call reproducing its spans exactly, and no seed
weak against its counter-calls."""

from __future__ import annotations

from collections import Counter

import pytest

from codesearch_core import config
from codesearch_core.corpora import (
    CATEGORY_TAGS,
    check_corpus,
    check_seed_file,
    corpus_root,
    read_blueprints_jsonl,
    read_manifest,
)
from codesearch_core.errors import CorpusError
from codesearch_core.grading import grade, grade_and_diff
from codesearch_core.models import Blueprint, Span, ToolName
from codesearch_core.tools import run_plan, run_tool_call

SEED_FILE = config.seeds_file().with_name("real_corpora.jsonl")
#: corpus -> the source `.ci/fetch_corpora.sh` fetches it from.
SOURCES = {"click": "pypi:click==8.1.7", "express": "npm:express@4.18.2"}
SEEDS, _ = read_blueprints_jsonl(SEED_FILE)
IDS = [bp.id for bp in SEEDS]


def _missing() -> list[str]:
    """The real corpora that are not fetched (no folder or no manifest)."""
    missing = []
    for name in SOURCES:
        try:
            manifest = read_manifest(corpus_root(name))
        except CorpusError:
            manifest = None
        if manifest is None:
            missing.append(name)
    return missing


MISSING = _missing()
needs_corpora = pytest.mark.skipif(
    bool(MISSING),
    reason=f"real corpora not fetched ({', '.join(MISSING)}): run .ci/fetch_corpora.sh",
)


# --------------------------------------------------------------- the file (no corpus needed)


def test_there_are_24_seeds_ten_on_each_real_corpus_with_both_tools() -> None:
    per_corpus = Counter(bp.corpus for bp in SEEDS)
    assert set(per_corpus) == set(SOURCES)
    assert len(SEEDS) >= 24
    assert all(n >= 10 for n in per_corpus.values()), per_corpus
    assert {bp.language for bp in SEEDS if bp.corpus == "click"} >= {"python"}
    assert {bp.language for bp in SEEDS if bp.corpus == "express"} >= {"javascript"}
    for name in SOURCES:
        tools = Counter(c.name for bp in SEEDS if bp.corpus == name for c in bp.reference_calls)
        assert tools[ToolName.AST_GREP] >= 3 and tools[ToolName.RIPGREP] >= 3, (name, tools)


def test_the_seeds_use_the_rule_form_pcre2_type_filters_and_empty_answers() -> None:
    assert sum("rule" in bp.reference_call.arguments for bp in SEEDS) >= 3
    tags = Counter(tag for bp in SEEDS for tag in bp.tags)
    assert tags["flag:pcre2"] >= 2 and tags["flag:type"] >= 4
    assert tags["empty-answer"] >= 4 and tags["plan"] >= 2
    # Every adversarial category has a seed on real code.
    for tag in CATEGORY_TAGS:
        assert tags[tag] >= 1, tag
    assert {bp.difficulty.value for bp in SEEDS} == {"easy", "medium", "hard"}


def test_every_seed_pins_its_files_and_its_corpus_snapshot() -> None:
    for bp in SEEDS:
        assert bp.snapshot is not None, f"{bp.id}: no snapshot (run `codesearch seeds pin --file`)"
        assert {p for p, _ in bp.pins} == {s.path for s in bp.expected}, bp.id
    # One snapshot per corpus: every seed of a corpus was checked on the same bytes.
    snapshots = {(bp.corpus, bp.snapshot) for bp in SEEDS}
    assert len(snapshots) == len(SOURCES), snapshots


# --------------------------------------------------------------- the corpora (fetched)


@needs_corpora
@pytest.mark.parametrize("name", sorted(SOURCES))
def test_the_fetched_corpus_is_the_snapshot_the_seeds_pin(name: str) -> None:
    root = corpus_root(name)
    manifest = read_manifest(root)
    assert manifest is not None
    assert manifest.source == SOURCES[name]
    check = check_corpus(name)
    assert check.ok, f"{name} was edited since it was fetched: {check.lines()}"
    pinned = {bp.snapshot for bp in SEEDS if bp.corpus == name}
    assert pinned == {manifest.snapshot_id} == {check.content_id}


@needs_corpora
def test_every_seed_keeps_the_seed_rules() -> None:
    # Tags from the vocabulary, counter-calls on adversarial seeds, spans inside pinned files.
    blueprints, problems = check_seed_file(SEED_FILE)
    assert [str(p) for p in problems] == []
    assert [bp.id for bp in blueprints] == IDS


@needs_corpora
@pytest.mark.parametrize("bp", SEEDS, ids=IDS)
def test_reference_call_reproduces_the_expected_spans_exactly(bp: Blueprint) -> None:
    # `codesearch seeds verify`'s check: ok, not truncated, no miss, no extra.
    root = corpus_root(bp.corpus)
    run = run_plan(bp.plan, root) if bp.plan else run_tool_call(bp.reference_call, root)
    assert run.ok, f"{bp.id}: {run.error_kind}: {run.error}"
    assert not run.truncated
    g, diff = grade_and_diff(run.findings, bp.expected)
    assert diff.misses == ()
    assert diff.extras == ()
    assert (g.span_f1, g.file_iou) == (1.0, 1.0)


EMPTY = [bp for bp in SEEDS if "empty-answer" in bp.tags]


@needs_corpora
@pytest.mark.parametrize("bp", EMPTY, ids=[bp.id for bp in EMPTY])
def test_an_empty_answer_seed_grades_zero_for_its_decoys(bp: Blueprint) -> None:
    assert bp.expected == ()
    assert grade([], bp.expected).span_f1 == 1.0
    for call in [c.call for c in bp.counter_calls]:
        found = run_tool_call(call, corpus_root(bp.corpus)).findings
        assert found, f"{bp.id}: a counter-call of an empty-answer seed should find its decoy"
        assert grade(found[:1] or [Span("README.md", 1, 1)], bp.expected).span_f1 == 0.0


@needs_corpora
def test_the_audit_passes_and_no_seed_is_weak() -> None:
    # `codesearch seeds audit --file data/seeds/real_corpora.jsonl` exits 0.
    from codesearch_core.verify import audit_seeds, summarize

    audits = audit_seeds(SEEDS, workers=4)
    summary = summarize(audits)
    weak = {a.seed.id: a.counter_best for a in audits if a.weak}
    assert weak == {}
    assert summary.first_line_over == ()
    assert summary.passed
    # Every adversarial seed's reference beats its best counter-call.
    for a in audits:
        if a.counter_best is not None:
            assert a.reference > a.counter_best, a.seed.id
