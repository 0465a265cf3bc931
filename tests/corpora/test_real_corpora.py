"""The seeds on real code: data/seeds/real_corpora.jsonl (click 8.1.7 and express 4.18.2) and
data/seeds/real_languages.jsonl (JPype1, cryptography, lz4, bull, bats, immer, expo-clipboard),
pinned snapshots of PyPI sdists and npm packages fetched by `.ci/fetch_corpora.sh`, never
committed.

The files themselves are checked always; everything that runs the tools on a corpus is skipped,
with the command to run, where that corpus has not been fetched (nothing downloads at test time).
What runs is what `codesearch seeds verify --file ...` and `codesearch seeds audit --file ...` run:
the seed rules, each reference call reproducing its spans exactly, and no seed weak against its
counter-calls."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

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
LANGUAGES_FILE = config.seeds_file().with_name("real_languages.jsonl")
SEED_FILES = (SEED_FILE, LANGUAGES_FILE)
#: corpus -> the source `.ci/fetch_corpora.sh` fetches it from (keep the two in step).
SOURCES = {
    "click": "pypi:click==8.1.7",
    "express": "npm:express@4.18.2",
    "jpype": "pypi:JPype1==1.5.0",
    "cryptography": "pypi:cryptography==41.0.7",
    "lz4": "pypi:lz4==4.3.3",
    "bull": "npm:bull@4.16.5",
    "bats": "npm:bats@1.11.0",
    "immer": "npm:immer@10.1.1",
    "expo-clipboard": "npm:expo-clipboard@6.0.3",
}
#: The programming languages (ast-grep parses them) the real corpora hold, at least.
LANGUAGES = {
    "python", "javascript", "typescript", "tsx", "c", "cpp", "rust", "go", "java", "lua", "bash",
    "kotlin", "swift",
}  # fmt: skip
SEEDS, _ = read_blueprints_jsonl(SEED_FILE)
NEW_SEEDS, _ = read_blueprints_jsonl(LANGUAGES_FILE)
ALL_SEEDS = SEEDS + NEW_SEEDS


def _missing() -> set[str]:
    """The real corpora that are not fetched (no folder or no manifest)."""
    missing = set()
    for name in SOURCES:
        try:
            manifest = read_manifest(corpus_root(name))
        except CorpusError:
            manifest = None
        if manifest is None:
            missing.add(name)
    return missing


MISSING = _missing()
_FETCH = "run .ci/fetch_corpora.sh"


def _skip_unless_fetched(names: set[str]) -> None:
    gone = sorted(names & MISSING)
    if gone:
        pytest.skip(f"real corpora not fetched ({', '.join(gone)}): {_FETCH}")


def _corpora_of(path: Path) -> set[str]:
    blueprints, _ = read_blueprints_jsonl(path)
    return {bp.corpus for bp in blueprints}


# --------------------------------------------------------------- the files (no corpus needed)


def test_there_are_24_seeds_ten_on_each_real_corpus_with_both_tools() -> None:
    per_corpus = Counter(bp.corpus for bp in SEEDS)
    assert set(per_corpus) == {"click", "express"}
    assert len(SEEDS) >= 24
    assert all(n >= 10 for n in per_corpus.values()), per_corpus
    assert {bp.language for bp in SEEDS if bp.corpus == "click"} >= {"python"}
    assert {bp.language for bp in SEEDS if bp.corpus == "express"} >= {"javascript"}
    for name in per_corpus:
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


def test_sixty_seeds_on_the_new_corpora_every_category_and_fifteen_plans() -> None:
    assert len(NEW_SEEDS) >= 60
    assert {bp.corpus for bp in NEW_SEEDS} == set(SOURCES) - {"click", "express"}
    tags = Counter(tag for bp in NEW_SEEDS for tag in bp.tags)
    for tag in CATEGORY_TAGS:
        assert tags[tag] >= 1, tag
    # Plans: a search, then a narrower one over the files it found; no single call answers them.
    assert tags["plan"] >= 15
    assert all(bp.plan is not None for bp in NEW_SEEDS if "plan" in bp.tags)
    assert {bp.difficulty.value for bp in NEW_SEEDS} == {"easy", "medium", "hard"}
    ids = [bp.id for bp in ALL_SEEDS]
    assert len(ids) == len(set(ids))


def test_the_real_seeds_cover_at_least_ten_programming_languages() -> None:
    # A seed's language, or for a text seed the ast-grep language its tool calls name.
    used = {bp.language for bp in ALL_SEEDS} | {
        str(c.arguments["language"]) for bp in ALL_SEEDS for c in bp.reference_calls
        if "language" in c.arguments
    }  # fmt: skip
    assert len(used & LANGUAGES) >= 10, sorted(used & LANGUAGES)


@pytest.mark.parametrize("path", SEED_FILES, ids=lambda p: p.name)
def test_every_seed_pins_its_files_and_its_corpus_snapshot(path: Path) -> None:
    blueprints, _ = read_blueprints_jsonl(path)
    for bp in blueprints:
        assert bp.snapshot is not None, f"{bp.id}: no snapshot (run `codesearch seeds pin --file`)"
        assert {p for p, _ in bp.pins} == {s.path for s in bp.expected}, bp.id
    # One snapshot per corpus: every seed of a corpus was checked on the same bytes.
    snapshots = {(bp.corpus, bp.snapshot) for bp in blueprints}
    assert len(snapshots) == len({bp.corpus for bp in blueprints}), snapshots


# --------------------------------------------------------------- the corpora (fetched)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_the_fetched_corpus_is_the_snapshot_the_seeds_pin(name: str) -> None:
    _skip_unless_fetched({name})
    root = corpus_root(name)
    manifest = read_manifest(root)
    assert manifest is not None
    assert manifest.source == SOURCES[name]
    check = check_corpus(name)
    assert check.ok, f"{name} was edited since it was fetched: {check.lines()}"
    pinned = {bp.snapshot for bp in ALL_SEEDS if bp.corpus == name}
    assert pinned == {manifest.snapshot_id} == {check.content_id}


@pytest.mark.parametrize("path", SEED_FILES, ids=lambda p: p.name)
def test_every_seed_keeps_the_seed_rules(path: Path) -> None:
    # Tags from the vocabulary, counter-calls on adversarial seeds, spans inside pinned files.
    _skip_unless_fetched(_corpora_of(path))
    blueprints, problems = check_seed_file(path)
    assert [str(p) for p in problems] == []
    assert [bp.id for bp in blueprints] == [bp.id for bp in read_blueprints_jsonl(path)[0]]


@pytest.mark.parametrize("bp", ALL_SEEDS, ids=[bp.id for bp in ALL_SEEDS])
def test_reference_call_reproduces_the_expected_spans_exactly(bp: Blueprint) -> None:
    # `codesearch seeds verify`'s check: ok, not truncated, no miss, no extra.
    _skip_unless_fetched({bp.corpus})
    root = corpus_root(bp.corpus)
    run = run_plan(bp.plan, root) if bp.plan else run_tool_call(bp.reference_call, root)
    assert run.ok, f"{bp.id}: {run.error_kind}: {run.error}"
    assert not run.truncated
    g, diff = grade_and_diff(run.findings, bp.expected)
    assert diff.misses == ()
    assert diff.extras == ()
    assert (g.span_f1, g.file_iou) == (1.0, 1.0)


EMPTY = [bp for bp in ALL_SEEDS if "empty-answer" in bp.tags]


@pytest.mark.parametrize("bp", EMPTY, ids=[bp.id for bp in EMPTY])
def test_an_empty_answer_seed_grades_zero_for_its_decoys(bp: Blueprint) -> None:
    _skip_unless_fetched({bp.corpus})
    assert bp.expected == ()
    assert grade([], bp.expected).span_f1 == 1.0
    for call in [c.call for c in bp.counter_calls]:
        found = run_tool_call(call, corpus_root(bp.corpus)).findings
        assert found, f"{bp.id}: a counter-call of an empty-answer seed should find its decoy"
        assert grade(found[:1] or [Span("README.md", 1, 1)], bp.expected).span_f1 == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("path", SEED_FILES, ids=lambda p: p.name)
def test_the_audit_passes_and_no_seed_is_weak(path: Path) -> None:
    # `codesearch seeds audit --file data/seeds/real_*.jsonl` exits 0.
    from codesearch_core.verify import audit_seeds, summarize

    _skip_unless_fetched(_corpora_of(path))
    blueprints, _ = read_blueprints_jsonl(path)
    audits = audit_seeds(blueprints, workers=4)
    summary = summarize(audits)
    weak = {a.seed.id: a.counter_best for a in audits if a.weak}
    assert weak == {}
    assert summary.first_line_over == ()
    assert summary.passed
    # Every adversarial seed's reference beats its best counter-call.
    for a in audits:
        if a.counter_best is not None:
            assert a.reference > a.counter_best, a.seed.id
