"""Blueprint authoring: drafts, the expected-findings table, uploads, what a curator types.
Real corpora, real tools."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from codesearch_core import ingest, studio
from codesearch_core.corpora.blueprints import (
    blueprint_from_dict,
    blueprint_to_dict,
    dumps_blueprints_jsonl,
)
from codesearch_core.errors import InputFileError
from codesearch_core.ingest.seeds import seed_blueprints
from codesearch_core.models import CounterCall, Difficulty, Finding, Span, Split
from codesearch_core.store.core import Store
from codesearch_core.studio import drafts


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "studio.duckdb") as s:
        yield s


@pytest.fixture
def seeded(store: Store) -> Store:
    ingest.ensure_seeded(store)
    return store


@pytest.mark.parametrize(
    ("text", "expected"),
    [("12", (12, 12)), ("3-7", (3, 7)), (" 4 : 9 ", (4, 9)), ("5\u20136", (5, 6))],
)
def test_line_ranges_are_read_as_a_curator_types_them(text: str, expected: tuple[int, int]) -> None:
    assert drafts.parse_line_range(text) == expected


@pytest.mark.parametrize("text", ["", "x", "0", "9-3", "1-2-3"])
def test_bad_line_ranges_are_refused_with_the_text(text: str) -> None:
    with pytest.raises(InputFileError, match="line"):
        drafts.parse_line_range(text)


def test_a_suggested_id_is_a_slug_of_the_intent_numbered_when_taken() -> None:
    taken = {"webshop-useeffect-call-components"}
    bp_id = studio.suggest_blueprint_id(
        "webshop", "Find every useEffect call in the components", taken.__contains__
    )
    assert bp_id == "webshop-useeffect-call-components-2"


def test_language_comes_from_ast_grep_or_from_the_files_found() -> None:
    ag = {"name": "ast_grep_search", "arguments": {"pattern": "f()", "language": "tsx"}}
    rg = {"name": "ripgrep_search", "arguments": {"pattern": "x"}}
    assert studio.infer_language(ag) == "tsx"
    assert (
        studio.infer_language(rg, [Span("a.go", 1, 1), Span("b.go", 2, 2), Span("c.py", 1, 1)])
        == "go"
    )
    assert studio.infer_language(rg, [Span("notes.txt", 1, 1)]) == "text"


def _finding(path: str, line: int, text: str = "hit") -> Finding:
    return Finding(path, line, 1, line, 4, 0, 3, text)


def test_the_expected_table_shows_found_and_hand_added_spans_and_reads_back_the_ticks() -> None:
    found = [_finding("a.py", 3, "foo()"), _finding("a.py", 3, "bar()"), _finding("b.py", 7)]
    rows = studio.expected_table(found, [Span("a.py", 3, 3), Span("c.py", 10, 12)])
    assert [(r["path"], r["lines"], r["expected"], r["source"]) for r in rows] == [
        ("a.py", "3", True, "found"),
        ("b.py", "7", False, "found"),
        ("c.py", "10-12", True, "added"),
    ]
    rows[1]["expected"] = True
    rows[2]["expected"] = False
    assert studio.spans_from_table(rows) == (Span("a.py", 3, 3), Span("b.py", 7, 7))


def test_the_expected_table_shows_and_reads_back_the_supporting_marks() -> None:
    found = [_finding("a.py", 3), _finding("b.py", 7)]
    expected = [Span("a.py", 3, 3), Span("c.py", 10, 12, supporting=True)]
    rows = studio.expected_table(found, expected)
    assert [(r["path"], r["expected"], r["supporting"]) for r in rows] == [
        ("a.py", True, False),
        ("b.py", False, False),
        ("c.py", True, True),
    ]
    rows[1]["supporting"] = True  # ticking supporting alone makes it an expected span, marked
    spans = studio.spans_from_table(rows)
    assert spans == (Span("a.py", 3, 3), Span("b.py", 7, 7), Span("c.py", 10, 12))
    assert [s.supporting for s in spans] == [False, True, True]


def test_a_reopened_blueprint_shows_the_text_of_spans_no_run_found_yet() -> None:
    # Reopened: nothing run yet, so no findings carry text; the rows read it from the corpus.
    bp = next(b for b in seed_blueprints() if b.expected)
    rows = studio.expected_table([], bp.expected, bp.corpus)
    assert rows and all(r["text"] for r in rows), rows
    assert studio.expected_table([], [Span("no/such/file.py", 1, 1)], bp.corpus)[0]["text"] == ""


def test_a_draft_from_a_run_expects_everything_it_found(seeded: Store) -> None:
    call = {"name": "ripgrep_search", "arguments": {"pattern": "System.out.println"}}
    found = (
        _finding("src/Main.java", 14),
        _finding("src/Main.java", 14),
        _finding("src/T.java", 2),
    )
    draft = studio.draft_from_run("ledger", call, found)
    assert draft.expected == (Span("src/Main.java", 14, 14), Span("src/T.java", 2, 2))
    assert draft.language == "java" and draft.editing is None


def test_adding_a_span_checks_the_file_and_its_length() -> None:
    draft = studio.BlueprintDraft(corpus="ledger", call={})
    added = studio.add_expected_span(draft, "pom.xml", "1-2")
    assert added.expected == (Span("pom.xml", 1, 2),)
    with pytest.raises(InputFileError, match="not a file"):
        studio.add_expected_span(draft, "nope.java", "1")
    with pytest.raises(InputFileError, match="runs past its end"):
        studio.add_expected_span(draft, "pom.xml", "100000")


def test_a_draft_becomes_a_blueprint_or_an_error_that_names_the_field() -> None:
    draft = studio.BlueprintDraft(
        corpus="ledger",
        call={"name": "ripgrep_search", "arguments": {"pattern": "TODO"}},
        intent="  Find the TODO markers  ",
        id="ledger-todos",
        language="java",
        expected=(Span("a.java", 3, 3),),
        tags=("todo", " "),
        difficulty=Difficulty.EASY,
    )
    bp = studio.blueprint_from_draft(draft)
    assert (bp.id, bp.intent, bp.tags, bp.difficulty) == (
        "ledger-todos",
        "Find the TODO markers",
        ("todo",),
        Difficulty.EASY,
    )
    with pytest.raises(InputFileError, match="intent"):
        studio.blueprint_from_draft(
            studio.BlueprintDraft(corpus="ledger", call=draft.call, id="x", language="java")
        )


def test_tags_are_split_trimmed_and_deduplicated() -> None:
    assert studio.parse_tags("react, pattern,\nreact ,, adversarial:x") == (
        "react",
        "pattern",
        "adversarial:x",
    )


def test_an_upload_reports_every_bad_line_by_number() -> None:
    good = dumps_blueprints_jsonl(seed_blueprints()[:2])
    data = (good + "not json\n" + '{"id": "x"}\n').encode()
    blueprints, errors = studio.check_upload(data, "mine.jsonl")
    assert len(blueprints) == 2
    assert [(e.line, e.source) for e in errors] == [(3, "mine.jsonl"), (4, "mine.jsonl")]


def test_an_edit_keeps_the_blueprints_counter_calls() -> None:
    first = seed_blueprints()[0]
    wrong = CounterCall(first.reference_call, "stands in for a wrong call")
    seed = replace(first, counter_calls=(wrong,), pins=())
    edited = replace(studio.draft_from_blueprint(seed), notes="edited in the form")
    saved = studio.blueprint_from_draft(edited)
    assert saved.counter_calls == seed.counter_calls
    assert saved.notes == "edited in the form"


def test_editing_a_plan_blueprint_edits_its_last_step_and_keeps_the_others() -> None:
    plan = {
        "steps": [
            {"call": {"name": "ripgrep_search", "arguments": {"pattern": "useEffect"}}},
            {
                "call": {"name": "ast_grep_search",
                         "arguments": {"pattern": "useEffect($$$A)", "language": "tsx"}},
                "restrict_to_previous": True,
            },
        ]
    }  # fmt: skip
    seed = seed_blueprints()[0]
    bp = blueprint_from_dict({**blueprint_to_dict(seed), "reference_call": plan})
    draft = studio.draft_from_blueprint(bp)
    edited_call = {"name": "ast_grep_search",
                   "arguments": {"pattern": "useEffect($F, $D)", "language": "tsx"}}  # fmt: skip
    saved = studio.blueprint_from_draft(replace(draft, call=edited_call))
    assert saved.plan is not None
    assert saved.reference_dict()["steps"][0] == {**plan["steps"][0], "restrict_to_previous": False}
    assert saved.reference_call.to_dict() == edited_call
    assert saved.plan.steps[1].restrict_to_previous


def test_the_split_goes_through_the_editor_and_is_saved(seeded: Store) -> None:
    bp = seed_blueprints()[0]
    draft = replace(drafts.draft_from_blueprint(bp), split=Split.EVAL)
    assert drafts.blueprint_from_draft(draft).split is Split.EVAL
    assert seeded.blueprints.upsert(drafts.blueprint_from_draft(draft)) == "updated"
    stored = seeded.blueprints.get(bp.id)
    assert stored is not None and drafts.draft_from_blueprint(stored).split is Split.EVAL


def test_a_span_is_checked_against_the_lines_rg_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A lone CR ends a line for bytes.splitlines but not for rg: "a\rb\n" is one line, and a span
    # on line 2 would name a line no finding can have.
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "f.txt").write_bytes(b"a\rb\nlast")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path))
    draft = studio.BlueprintDraft(corpus="c", call={})
    assert studio.add_expected_span(draft, "f.txt", "2").expected == (Span("f.txt", 2, 2),)
    with pytest.raises(InputFileError, match="has 2 lines"):
        studio.add_expected_span(draft, "f.txt", "3")
