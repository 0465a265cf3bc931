"""The Corpus page's ad-hoc search and browser, and the Overview's links into the review queue."""

from __future__ import annotations

from pathlib import Path

from app_support import (
    open_app,
    seed_reviewable,
    stored,
    texts,
)
from streamlit.testing.v1 import AppTest

from codesearch_core.models import DecisionAction
from codesearch_core.store import PROPOSAL
from codesearch_core.store.types import DecisionState

CORPUS = "pages/corpus.py"


def pattern_input(at: AppTest) -> object:
    return next(w for w in at.text_input if str(w.key).endswith(":pattern:pattern"))


def test_a_search_lists_its_findings_and_marks_them_in_the_file(studio_db: Path) -> None:
    at = open_app(CORPUS)
    at.sidebar.selectbox(key="corpus").set_value("ledger").run()
    pattern_input(at).input("System.out.println").run()  # type: ignore[attr-defined]
    at.button(key="adhoc_run").click().run()
    assert any(s.startswith("5 findings in 4 files") for s in texts(at, "success"))
    table = at.dataframe[0].value
    assert list(table.columns) == ["path", "lines", "line"]
    assert "// TODO: System.out.println" in " ".join(table["line"])
    at.session_state["corpus_open_file"] = "src/main/java/com/example/ledger/TransferService.java"
    at.run()
    marked = " ".join(str(h.proto.body) for h in at.html)
    assert marked.count('title="match"') == 2 and "<mark" in marked


def test_a_regex_that_does_not_compile_is_a_message(studio_db: Path) -> None:
    at = open_app(CORPUS)
    pattern_input(at).input("foo(").run()  # type: ignore[attr-defined]
    at.button(key="adhoc_run").click().run()
    assert not at.exception
    assert any("invalid_pattern" in e for e in texts(at, "error"))


def test_raw_json_that_is_not_a_call_is_a_message_and_cannot_run(studio_db: Path) -> None:
    at = open_app(CORPUS)
    at.sidebar.selectbox(key="corpus").set_value("ledger").run()
    at.segmented_control(key="adhoc:ledger:mode").set_value("JSON").run()
    editor = next(t for t in at.text_area if str(t.key).endswith(":json"))
    editor.input('{"name": "ripgrep_search", "arguments": {"pattern": "x", "flags": "-i"}}').run()
    assert any("unknown field(s): flags" in e for e in texts(at, "error"))
    # Run is never greyed (a greyed Run swallowed the click that would commit what was typed):
    # clicked, it says why the call cannot run, and runs nothing.
    at.button(key="adhoc_run").click().run()
    assert any("The call cannot run yet" in e for e in texts(at, "error"))
    assert not texts(at, "success")


def test_the_file_browser_shows_a_file_with_its_language(studio_db: Path) -> None:
    at = open_app(CORPUS)
    at.sidebar.selectbox(key="corpus").set_value("ledger").run()
    at.session_state["corpus_open_file"] = "pom.xml"
    at.run()
    (code,) = [c for c in at.code if "<project" in c.value]
    assert code.language == "xml"


def test_overview_counts_and_a_link_into_the_filtered_queue(
    studio_db: Path, reviewable_template: Path
) -> None:
    queue = seed_reviewable(studio_db, reviewable_template)
    with stored(studio_db) as store:
        store.queue(PROPOSAL).decide(queue[1], DecisionAction.REJECT, "ann")
        ran = next(i for i in queue[2:] if (r := store.review_item(i)) and r.execution.ok)  # type: ignore[union-attr]
        store.queue(PROPOSAL).decide(ran, DecisionAction.ACCEPT, "ann")
    at = open_app()
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["Accepted"], metrics["Rejected"], metrics["Acceptance"]) == ("1", "1", "50%")
    next(b for b in at.button if b.label == "Review rejects").click().run()
    assert not at.exception
    assert at.session_state["review_filters"].decision is DecisionState.REJECTED
    heading = next(t for t in texts(at, "markdown") if t.startswith("#### Item"))
    assert heading.startswith(f"#### Item 2 of {len(queue)} · 1 rejected")


def _field(at: AppTest, kind: str, name: str) -> object:
    return next(w for w in getattr(at, kind) if str(w.key).endswith(f":{name}"))


def test_edits_to_two_fields_after_a_run_are_both_kept(studio_db: Path) -> None:
    """Bug 2 of the review issue: after one Run, the next edit of the search form was dropped (the
    editor reloaded the call just run and re-keyed its widgets)."""
    at = open_app(CORPUS)
    at.sidebar.selectbox(key="corpus").set_value("ledger").run()
    pattern_input(at).input("System.out.println").run()  # type: ignore[attr-defined]
    at.button(key="adhoc_run").click().run()
    assert any(s.startswith("5 findings in 4 files") for s in texts(at, "success"))
    pattern_input(at).input("println").run()  # type: ignore[attr-defined]
    _field(at, "text_area", "globs").input("**/TransferService.java").run()  # type: ignore[attr-defined]
    _field(at, "checkbox", "fixed_strings").check().run()  # type: ignore[attr-defined]
    assert pattern_input(at).value == "println"  # type: ignore[attr-defined]
    assert _field(at, "text_area", "globs").value == "**/TransferService.java"  # type: ignore[attr-defined]
    assert _field(at, "checkbox", "fixed_strings").value is True  # type: ignore[attr-defined]
    at.button(key="adhoc_run").click().run()
    table = at.dataframe[0].value
    assert set(table["path"]) == {"src/main/java/com/example/ledger/TransferService.java"}
    assert all("println" in line for line in table["line"])


def test_structural_search_starts_in_the_corpus_language_and_nothing_found_is_no_success(
    studio_db: Path,
) -> None:
    """Bug 7 of the review issue: in a JavaScript corpus ast-grep's language started as bash, and
    the "0 findings" that followed was shown in green as a success."""
    at = open_app(CORPUS)
    at.sidebar.selectbox(key="corpus").set_value("webshop").run()
    next(r for r in at.radio if str(r.key).endswith(":tool")).set_value("ast_grep_search").run()
    assert _field(at, "selectbox", "language").value == "javascript"  # type: ignore[attr-defined]
    pattern_input(at).input("console.log($$$ARGS)").run()  # type: ignore[attr-defined]
    at.button(key="adhoc_run").click().run()
    assert any("findings in" in s for s in texts(at, "success"))
    pattern_input(at).input("definitelyNotCalledAnywhere($X)").run()  # type: ignore[attr-defined]
    at.button(key="adhoc_run").click().run()
    assert not [s for s in texts(at, "success") if "findings" in s]
    assert any("No findings" in w for w in texts(at, "warning"))
    at.sidebar.selectbox(key="corpus").set_value("telemetry").run()
    next(r for r in at.radio if str(r.key).endswith(":tool")).set_value("ast_grep_search").run()
    assert _field(at, "selectbox", "language").value == "python"  # type: ignore[attr-defined]


def test_raising_the_reviews_per_item_says_how_many_settled_items_open_again(
    studio_db: Path, reviewable_template: Path
) -> None:
    ids = seed_reviewable(studio_db, reviewable_template)
    with stored(studio_db) as store:
        for item in ids[:3]:
            store.queue(PROPOSAL).decide(item, DecisionAction.SKIP, "ann")  # a skip settles nothing
        decided = [i for i in ids if store.queue(PROPOSAL).accept_blocker(i) is None][:2]
        for item in decided:
            store.queue(PROPOSAL).decide(item, DecisionAction.ACCEPT, "ann")
    at = open_app("pages/overview.py", reviewer="lee")
    at.number_input(key="rs:n").set_value(2)
    next(b for b in at.button if "Save review settings" in str(b.label)).click().run()
    assert not at.exception, at.exception
    # Said before anything is saved (issue 39), then saved on the second click.
    assert "With 2 reviews per item: 2 proposals settled by fewer reviews would be open again." in (
        texts(at, "warning"))  # fmt: skip
    with stored(studio_db) as store:
        assert store.review_settings().reviews_per_item == 1
    at.button(key="rs:confirm").click().run()
    assert not at.exception, at.exception
    with stored(studio_db) as store:
        assert store.review_settings().reviews_per_item == 2
    assert "With 2 reviews per item: 2 proposals settled by fewer reviews are open again." in texts(
        at, "warning"
    )
    at.run()  # said once: the next run does not repeat it
    assert not any("per item:" in w for w in texts(at, "warning"))
