"""The Blueprints page: author, run, choose the expected findings, save; duplicates; JSONL import;
and a blueprint started from a Corpus search."""

from __future__ import annotations

from pathlib import Path

from app_support import (
    open_app,
    stored,
    texts,
)
from streamlit.testing.v1 import AppTest

from codesearch_core.corpora.blueprints import dumps_blueprints_jsonl
from codesearch_core.models import Span

BLUEPRINTS = "pages/blueprints.py"


def field(at: AppTest, kind: str, suffix: str) -> object:
    """The editor's widget whose key ends with `suffix` (editor keys carry a version number; the
    list filters above the editor are keyed `bpf:...`)."""
    return next(
        w
        for w in getattr(at, kind)
        if str(w.key).endswith(suffix) and not str(w.key).startswith("bpf:")
    )


def new_blueprint(at: AppTest, intent: str, pattern: str) -> None:
    at.button(key="bp_new").click().run()
    field(at, "selectbox", ":corpus").set_value("ledger").run()  # type: ignore[attr-defined]
    field(at, "text_area", ":intent").input(intent).run()  # type: ignore[attr-defined]
    field(at, "text_input", ":pattern:pattern").input(pattern).run()  # type: ignore[attr-defined]


def test_author_run_untick_and_save_a_blueprint(studio_db: Path) -> None:
    at = open_app(BLUEPRINTS)
    new_blueprint(at, "Find the System.out.println calls, comments included", "System.out.println")
    at.button(key="bp_run").click().run()
    table = at.data_editor[0].value
    assert list(table["expected"]) == [True] * 5  # a first run expects everything it found
    editor_key = at.data_editor[0].key
    at.session_state[editor_key] = {
        "edited_rows": {0: {"expected": False}}, "added_rows": [], "deleted_rows": [],
    }  # fmt: skip
    at.run()
    at.button(key="bp_save").click().run()
    assert not at.exception
    saved = [s for s in texts(at, "success") if "created" in s]
    assert saved, texts(at, "error")
    bp_id = saved[0].split("`")[1]
    with stored(studio_db) as store:
        bp = store.blueprints.get(bp_id)
    assert bp is not None and bp.corpus == "ledger" and bp.language == "java"
    assert bp.reference_call.to_dict() == {
        "name": "ripgrep_search", "arguments": {"pattern": "System.out.println"},
    }  # fmt: skip
    first_found = table.iloc[0]
    assert len(bp.expected) == 4
    assert (
        Span(first_found["path"], int(first_found["lines"]), int(first_found["lines"]))
        not in bp.expected
    )


def test_fields_edited_in_turn_are_all_kept_and_saved(studio_db: Path) -> None:
    """Bug 2 of the review issue: in the new-blueprint form, editing two fields in turn lost one
    edit (the draft handed the editor its own last call back, which re-keyed the widgets)."""
    at = open_app(BLUEPRINTS)
    new_blueprint(at, "Find the println calls in the transfer service", "println")
    field(at, "text_area", ":globs").input("**/TransferService.java").run()  # type: ignore[attr-defined]
    field(at, "checkbox", ":fixed_strings").check().run()  # type: ignore[attr-defined]
    field(at, "text_input", ":pattern:pattern").input("System.out.println").run()  # type: ignore[attr-defined]
    field(at, "text_area", ":notes").input("comments count").run()  # type: ignore[attr-defined]
    at.button(key="bp_run").click().run()
    assert all("TransferService" in p for p in at.data_editor[0].value["path"])
    at.button(key="bp_save").click().run()
    saved = [s for s in texts(at, "success") if "created" in s]
    assert saved, texts(at, "error")
    with stored(studio_db) as store:
        bp = store.blueprints.get(saved[0].split("`")[1])
    assert bp is not None and bp.notes == "comments count"
    assert bp.reference_call.to_dict() == {
        "name": "ripgrep_search",
        "arguments": {
            "pattern": "System.out.println",
            "globs": ["**/TransferService.java"],
            "fixed_strings": True,
        },
    }


def test_a_blueprint_saved_in_the_eval_split_is_listed_as_such(studio_db: Path) -> None:
    at = open_app(BLUEPRINTS)
    new_blueprint(at, "Find the println calls, held out for evaluation", "System.out.println")
    field(at, "segmented_control", ":split").set_value("eval").run()  # type: ignore[attr-defined]
    at.button(key="bp_run").click().run()
    at.button(key="bp_save").click().run()
    saved = [s for s in texts(at, "success") if "created" in s]
    assert saved, texts(at, "error")
    bp_id = saved[0].split("`")[1]
    with stored(studio_db) as store:
        bp = store.blueprints.get(bp_id)
    assert bp is not None and bp.split.value == "eval"
    at = open_app(BLUEPRINTS)
    at.text_input(key="bpf:text").input(bp_id).run()
    listed = at.dataframe[0].value
    assert list(listed["split"]) == ["eval"]


def test_a_span_the_call_misses_can_be_added_by_file_and_lines(studio_db: Path) -> None:
    at = open_app(BLUEPRINTS)
    new_blueprint(at, "Find the transfer method and its guard clause", "void transfer")
    at.button(key="bp_run").click().run()
    field(at, "selectbox", ":add_path").set_value(
        "src/main/java/com/example/ledger/TransferService.java"
    ).run()  # type: ignore[attr-defined]
    field(at, "text_input", ":add_lines").input("20-22").run()  # type: ignore[attr-defined]
    at.button(key="bp_add_span").click().run()
    rows = at.data_editor[0].value
    added = rows[rows["source"] == "added"]
    assert list(added["lines"]) == ["20-22"] and bool(added["expected"].iloc[0])


def test_a_blueprint_with_the_same_content_as_another_is_refused_by_name(studio_db: Path) -> None:
    open_app()  # first start: the seeds are loaded
    with stored(studio_db) as store:
        seed = store.blueprints.list(limit=1).items[0]
    at = open_app(BLUEPRINTS)
    at.button(key="bp_new").click().run()
    field(at, "selectbox", ":corpus").set_value(seed.corpus).run()  # type: ignore[attr-defined]
    field(at, "text_area", ":intent").input(seed.intent.upper()).run()  # type: ignore[attr-defined]
    field(at, "segmented_control", ":mode").set_value("JSON").run()  # type: ignore[attr-defined]
    field(at, "text_area", ":json").input(seed.reference_call.to_json()).run()  # type: ignore[attr-defined]
    at.button(key="bp_save").click().run()
    assert not at.exception
    assert any(seed.id in e and "already has this intent" in e for e in texts(at, "error"))


def test_a_malformed_upload_lists_its_bad_lines_and_stores_nothing(studio_db: Path) -> None:
    at = open_app(BLUEPRINTS)
    with stored(studio_db) as store:
        before = store.counts().blueprints
        good = store.blueprints.list(limit=1).items
    text = (
        dumps_blueprints_jsonl(good).replace('"id": "', '"id": "copy-')
        + "{not json\n"
        + '{"id": "x"}\n'
    )
    at.file_uploader(key="bp_upload").set_value(
        ("mine.jsonl", text.encode(), "application/jsonl")
    ).run()
    at.button(key="bp_import").click().run()
    assert not at.exception
    (error,) = [e for e in texts(at, "error") if "Nothing was imported" in e]
    assert "line 2:" in error and "line 3:" in error
    with stored(studio_db) as store:
        assert store.counts().blueprints == before


def test_a_good_upload_is_imported(studio_db: Path) -> None:
    at = open_app(BLUEPRINTS)
    with stored(studio_db) as store:
        good = store.blueprints.list(limit=2).items
        before = store.counts().blueprints
    text = dumps_blueprints_jsonl(good)
    text += text.replace('"id": "', '"id": "copy-').replace('"intent": "', '"intent": "Copy: ')
    at.file_uploader(key="bp_upload").set_value(
        ("mine.jsonl", text.encode(), "application/jsonl")
    ).run()
    at.button(key="bp_import").click().run()
    shown = texts(at, "success") + texts(at, "error") + texts(at, "warning")
    assert any("Imported 2 new blueprints (2 already stored)" in s for s in shown), shown
    with stored(studio_db) as store:
        assert store.counts().blueprints == before + 2


def test_a_corpus_search_starts_a_prefilled_blueprint(studio_db: Path) -> None:
    at = open_app("pages/corpus.py")
    at.sidebar.selectbox(key="corpus").set_value("ledger").run()
    field(at, "text_input", ":pattern:pattern").input("System.out.println").run()  # type: ignore[attr-defined]
    at.button(key="adhoc_run").click().run()
    at.button(key="adhoc_to_blueprint").click().run()
    assert not at.exception
    assert any(h.value == "New blueprint" for h in at.subheader)
    assert field(at, "text_input", ":pattern:pattern").value == "System.out.println"  # type: ignore[attr-defined]
    assert list(at.data_editor[0].value["expected"]) == [True] * 5
    assert field(at, "text_input", ":language").value == "java"  # type: ignore[attr-defined]
