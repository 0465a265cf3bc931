"""The studio's view logic: seeding, blueprint drafts, the expected-findings table, uploads, the
review helpers and proposing in chunks. Real stores, real corpora, real tools."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from codesearch_core import studio
from codesearch_core.blueprints import dumps_blueprints_jsonl
from codesearch_core.engines import MutationEngine
from codesearch_core.errors import EngineError, InputFileError
from codesearch_core.models import DecisionAction, Difficulty, Finding, Span
from codesearch_core.schemas import parse_tool_call
from codesearch_core.store import Store
from codesearch_core.store_types import BlueprintFilters, QueueFilters
from codesearch_core.verify import verify_pending


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "studio.duckdb") as s:
        yield s


@pytest.fixture
def seeded(store: Store) -> Store:
    studio.ensure_seeded(store)
    return store


def test_first_start_loads_the_seeds_once(store: Store) -> None:
    report = studio.ensure_seeded(store)
    assert report is not None and report.new == len(studio.seed_blueprints()) >= 30
    assert studio.ensure_seeded(store) is None
    assert store.counts().blueprints == report.new


@pytest.mark.parametrize(
    ("text", "expected"),
    [("12", (12, 12)), ("3-7", (3, 7)), (" 4 : 9 ", (4, 9)), ("5\u20136", (5, 6))],
)
def test_line_ranges_are_read_as_a_curator_types_them(text: str, expected: tuple[int, int]) -> None:
    assert studio.parse_line_range(text) == expected


@pytest.mark.parametrize("text", ["", "x", "0", "9-3", "1-2-3"])
def test_bad_line_ranges_are_refused_with_the_text(text: str) -> None:
    with pytest.raises(InputFileError, match="line"):
        studio.parse_line_range(text)


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
    good = dumps_blueprints_jsonl(studio.seed_blueprints()[:2])
    data = (good + "not json\n" + '{"id": "x"}\n').encode()
    blueprints, errors = studio.check_upload(data, "mine.jsonl")
    assert len(blueprints) == 2
    assert [(e.line, e.source) for e in errors] == [(3, "mine.jsonl"), (4, "mine.jsonl")]


def _propose_and_verify(store: Store, n: int = 2) -> None:
    """Mutations for one small corpus's blueprints, executed and graded (a few seconds)."""
    blueprints = studio.all_blueprints(store, BlueprintFilters(corpus="ledger"), limit=1000)
    studio.propose_into_store(store, MutationEngine(), blueprints, n=n)
    verify_pending(store, workers=1)


def test_proposing_stores_chunk_by_chunk_and_stops_between_chunks(seeded: Store) -> None:
    blueprints = studio.all_blueprints(seeded, BlueprintFilters(corpus="webshop"), limit=1000)
    seen: list[int] = []
    progress = studio.propose_into_store(
        seeded, MutationEngine(), blueprints, n=1, chunk_size=3,
        on_chunk=lambda p: seen.append(p.blueprints_done), should_stop=lambda: len(seen) >= 2,
    )  # fmt: skip
    assert seen == [3, 6] and progress.blueprints_done == 6
    assert seeded.counts().proposals == progress.proposals == progress.new > 0


def test_all_blueprints_pages_through_the_store(seeded: Store) -> None:
    everything = studio.all_blueprints(seeded, BlueprintFilters(), limit=10_000)
    assert len(everything) == seeded.counts().blueprints
    assert len(studio.all_blueprints(seeded, BlueprintFilters(), limit=5)) == 5


def test_the_next_item_wraps_round_to_the_start_of_the_queue(seeded: Store) -> None:
    _propose_and_verify(seeded)
    queue = [i.proposal_id for i in seeded.review_queue(limit=1000).items]
    assert studio.next_item_id(seeded, QueueFilters()) == queue[0]
    assert studio.next_item_id(seeded, QueueFilters(), after_id=queue[0]) == queue[1]
    assert studio.next_item_id(seeded, QueueFilters(), after_id=queue[-1]) == queue[0]
    seeded.record_decision(queue[0], DecisionAction.ACCEPT, "ann")
    assert studio.next_item_id(seeded, QueueFilters()) == queue[1]


def test_review_findings_rows_come_from_the_stored_run(seeded: Store) -> None:
    _propose_and_verify(seeded)
    item = seeded.review_item(seeded.review_queue(limit=1).items[0].proposal_id)
    assert item is not None and item.execution is not None
    rows = studio.finding_rows_for(item)
    assert rows is not None
    hits = sum(r.status.value == "hit" for r in rows)
    assert item.grade is not None and hits == item.grade.n_matched


def test_an_edited_call_is_a_new_graded_proposal_with_its_parent(seeded: Store) -> None:
    _propose_and_verify(seeded)
    parent = next(
        i
        for i in seeded.review_queue(limit=1000).items
        if i.span_f1 is not None and i.span_f1 < 1.0
    )
    item = seeded.review_item(parent.proposal_id)
    assert item is not None
    fixed = item.blueprint.reference_call
    child_id = studio.rerun_edited(seeded, item, fixed, "ann")
    child = seeded.review_item(child_id)
    assert child is not None and child.proposal.proposal.parent_id == parent.proposal_id
    assert child.proposal.proposal.engine == studio.EDIT_ENGINE
    assert child.grade is not None and child.grade.span_f1 == 1.0


def test_an_edited_call_equal_to_an_earlier_proposal_is_that_proposal(seeded: Store) -> None:
    _propose_and_verify(seeded)
    first = seeded.review_queue(limit=1).items[0]
    item = seeded.review_item(first.proposal_id)
    assert item is not None and item.proposal.proposal.call is not None
    same = parse_tool_call(item.proposal.proposal.call.to_dict())
    assert studio.rerun_edited(seeded, item, same, "ann") == first.proposal_id


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_probing_a_closed_port_says_how_to_start_a_server() -> None:
    with pytest.raises(EngineError, match=r"cannot reach .*`vllm serve"):
        studio.probe_openai_server(f"http://127.0.0.1:{_free_port()}/v1", None, timeout_s=2)


class _Models(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        ok = self.path == "/v1/models" and self.headers.get("Authorization") == "Bearer k"
        body = json.dumps({"data": [{"id": "tiny"}]}).encode()
        self.send_response(200 if ok else 401)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_probing_a_server_lists_its_models_and_names_a_refused_key() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        assert studio.probe_openai_server(url, "k") == ["tiny"]
        with pytest.raises(EngineError, match="refused the API key"):
            studio.probe_openai_server(url, "wrong")
    finally:
        server.shutdown()
        server.server_close()
