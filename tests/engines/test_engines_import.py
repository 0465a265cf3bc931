"""Importing proposals made elsewhere: parsed like live output, bad lines named by number."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from codesearch_core.corpora.jsonl_lines import MAX_LINE_BYTES
from codesearch_core.engines.base import proposal_to_dict
from codesearch_core.engines.import_engine import ImportEngine
from codesearch_core.engines.mutations import MutationEngine
from codesearch_core.engines.repair import LENGTH_ERROR
from codesearch_core.errors import InputFileError
from codesearch_core.models import Blueprint, Span
from codesearch_core.tools.schemas import parse_tool_call

CALL = {"name": "ripgrep_search", "arguments": {"pattern": r"\bprintf\(", "file_types": ["c"]}}
BLUEPRINTS = [
    Blueprint(i, "find printf in C", parse_tool_call(CALL), "c", (Span("a.c", 1, 1),), "c")
    for i in ("bp1", "bp2")
]


def write_lines(path: Path, *rows: Any) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def test_raw_text_lines_are_parsed_and_repaired(tmp_path: Path) -> None:
    raw = json.dumps({"name": "rg", "arguments": {"pattern": "(?<=x)y"}})
    path = write_lines(
        tmp_path / "p.jsonl",
        {
            "blueprint_id": "bp1",
            "raw_text": raw,
            "engine": "vllm",
            "model": "Qwen/X",
            "finish_reason": "stop",
        },
    )
    (p,) = ImportEngine(path).propose(BLUEPRINTS)
    assert p.valid and p.call is not None
    assert p.call.arguments == {"pattern": "(?<=x)y", "pcre2": True}
    assert (p.engine, p.model, p.raw_text, p.finish_reason) == ("vllm", "Qwen/X", raw, "stop")
    assert p.repairs == (
        "tool name 'rg' → ripgrep_search",
        "pcre2 set: the pattern uses a look-around or back-reference",
    )


def test_call_lines_are_validated_and_get_defaults(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "p.jsonl", {"blueprint_id": "bp2", "call": CALL, "prompt_tokens": 9}
    )
    (p,) = ImportEngine(path, model="elsewhere").propose(BLUEPRINTS)
    assert p.valid and p.call is not None and p.call.to_dict() == CALL
    assert (p.engine, p.model, p.prompt_tokens) == ("import", "elsewhere", 9)


def test_invalid_output_is_kept_with_its_error(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "p.jsonl",
        {
            "blueprint_id": "bp1",
            "raw_text": '{"name": "ripgrep_search", "argu',
            "finish_reason": "length",
        },
        {"blueprint_id": "bp1", "call": {"name": "ripgrep_search", "arguments": {}}},
    )
    cut, empty = ImportEngine(path).propose(BLUEPRINTS)
    assert (cut.valid, cut.error, cut.raw_text) == (
        False,
        LENGTH_ERROR,
        '{"name": "ripgrep_search", "argu',
    )
    assert not empty.valid and empty.error == "arguments: `pattern` is a required property"


def test_what_propose_out_writes_imports_back_unchanged(tmp_path: Path) -> None:
    made = MutationEngine().propose(BLUEPRINTS, n=3)
    path = write_lines(tmp_path / "p.jsonl", *(proposal_to_dict(p) for p in made))
    imported = ImportEngine(path).propose(BLUEPRINTS)
    assert [proposal_to_dict(p) for p in imported] == [proposal_to_dict(p) for p in made]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "not JSON: Expecting value at column 1"),
        ('["a"]', "expected a JSON object, got list"),
        ('{"raw_text": "{}"}', "missing `blueprint_id`"),
        ('{"blueprint_id": "nope", "raw_text": "{}"}', "unknown blueprint_id 'nope'"),
        ('{"blueprint_id": "bp1"}', "give `raw_text` (what the model wrote) or `call`"),
        (
            '{"blueprint_id": "bp1", "call": {}, "prompt_tokens": "9"}',
            "`prompt_tokens` must be an integer",
        ),
        ('{"blueprint_id": "bp1", "call": {}, "sampling": []}', "`sampling` must be an object"),
    ],
)
def test_a_bad_line_is_an_error_naming_file_and_line(
    tmp_path: Path, line: str, message: str
) -> None:
    path = write_lines(tmp_path / "p.jsonl", {"blueprint_id": "bp1", "call": CALL}, line)
    with pytest.raises(InputFileError) as err:
        ImportEngine(path).propose(BLUEPRINTS)
    assert err.value.line == 2
    assert str(err.value).startswith(f"{path}:2: ")
    assert message in str(err.value)


def test_skip_bad_keeps_good_lines_and_lists_bad_ones(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "p.jsonl",
        {"blueprint_id": "bp1", "call": CALL},
        "{oops",
        "",
        {"blueprint_id": "ghost", "call": CALL},
        {"blueprint_id": "bp2", "call": CALL},
    )
    engine = ImportEngine(path, skip_bad=True)
    proposals = engine.propose(BLUEPRINTS)
    assert [p.blueprint_id for p in proposals] == ["bp1", "bp2"]
    assert [e.line for e in engine.skipped] == [2, 4]


def test_missing_file_and_non_utf8_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="no such file"):
        ImportEngine(tmp_path / "missing.jsonl").propose(BLUEPRINTS)
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(json.dumps({"blueprint_id": "bp1", "call": CALL}).encode() + b'\n"caf\xe9"\n')
    with pytest.raises(
        InputFileError, match=r"latin1.jsonl:2: not UTF-8 text \(byte 5 of the line\)"
    ):
        ImportEngine(bad).propose(BLUEPRINTS)


def test_a_mutation_is_imported_as_is_not_repaired(tmp_path: Path) -> None:
    reference = parse_tool_call(
        {"name": "ripgrep_search", "arguments": {"pattern": r"(?<=password=)\S+", "pcre2": True}}
    )
    bp = Blueprint("pw", "find password values", reference, "c", (Span("a.env", 1, 1),), "text")
    (dropped,) = [p for p in MutationEngine().propose([bp], n=9) if p.mutation_kind == "drop_pcre2"]
    path = write_lines(tmp_path / "p.jsonl", proposal_to_dict(dropped))
    (imported,) = ImportEngine(path).propose([bp])
    assert imported.call == dropped.call
    assert imported.call is not None and "pcre2" not in imported.call.arguments
    assert (imported.repairs, imported.mutation_kind) == ((), "drop_pcre2")


def test_a_line_nested_too_deep_is_an_error_naming_the_line(tmp_path: Path) -> None:
    good = {"blueprint_id": "bp1", "call": CALL}
    path = write_lines(tmp_path / "p.jsonl", good, "[" * 100_000 + "]" * 100_000, good)
    with pytest.raises(InputFileError) as err:
        ImportEngine(path).propose(BLUEPRINTS)
    assert str(err.value).startswith(f"{path}:2: not JSON: nesting too deep")
    engine = ImportEngine(path, skip_bad=True)
    assert len(engine.propose(BLUEPRINTS)) == 2
    assert [e.line for e in engine.skipped] == [2]


def test_a_line_over_the_length_limit_is_refused_and_skipped_without_holding_it(
    tmp_path: Path,
) -> None:
    good = json.dumps({"blueprint_id": "bp2", "call": CALL}).encode() + b"\n"
    path = tmp_path / "p.jsonl"
    huge = 64 * MAX_LINE_BYTES
    with path.open("wb") as fh:
        fh.write(good)
        # Sparse: 64 MiB of NUL bytes without a newline cost no disk.
        fh.truncate(len(good) + huge)
        fh.seek(0, 2)
        fh.write(b"\n" + good)
    with pytest.raises(InputFileError) as err:
        ImportEngine(path).propose(BLUEPRINTS)
    assert str(err.value) == (
        f"{path}:2: line longer than 1,048,576 bytes: one proposal per line is far shorter "
        "(is this a JSONL file?)"
    )
    engine = ImportEngine(path, skip_bad=True)
    tracemalloc.start()
    try:
        proposals = engine.propose(BLUEPRINTS)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [p.blueprint_id for p in proposals] == ["bp2", "bp2"]
    assert [e.line for e in engine.skipped] == [2]
    assert peak < 4 * MAX_LINE_BYTES  # the 64 MiB line was read a piece at a time


def test_a_line_just_under_the_limit_is_read(tmp_path: Path) -> None:
    row = {"blueprint_id": "bp1", "call": CALL, "prompt": ""}
    padding = MAX_LINE_BYTES - len(json.dumps(row))
    row["prompt"] = "x" * padding
    path = write_lines(tmp_path / "p.jsonl", row)
    assert path.stat().st_size == MAX_LINE_BYTES + 1  # the line, then its newline
    (proposal,) = ImportEngine(path).propose(BLUEPRINTS)
    assert proposal.valid and len(proposal.prompt) == padding


def test_a_byte_order_mark_is_ignored_and_a_directory_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"blueprint_id": "bp1", "call": CALL}).encode())
    (proposal,) = ImportEngine(path).propose(BLUEPRINTS)
    assert proposal.valid
    with pytest.raises(InputFileError, match="is a directory, not a JSONL file"):
        ImportEngine(tmp_path).propose(BLUEPRINTS)


BODY = json.dumps(CALL)
ARGS = json.dumps(CALL["arguments"])
#: A bare call that searches for the Hermes marker itself.
MARKER_SEARCH = {"name": "ripgrep_search", "arguments": {"pattern": "<tool_call>"}}


@pytest.mark.parametrize(
    ("raw_text", "declared", "repairs"),
    [
        (f"<tool_call>\n{BODY}\n</tool_call>", None, ()),
        (f"<tool_call>{BODY}</tool_call>", None, ()),  # no newlines: what a small model writes
        (
            f"Let me search.\n<tool_call>\n{BODY}",
            None,
            ("text before <tool_call> dropped", "</tool_call> missing"),
        ),
        (
            f"<tool_call>\n```json\n{BODY}\n```\n</tool_call>",
            None,
            ("markdown code fence removed",),
        ),
        (f"[TOOL_CALLS][{BODY}]", None, ()),
        (f"[{BODY}]", None, ()),
        ('{"name": "ripgrep_search", "parameters": ' + ARGS + "}", "llama3_json", ()),
        # A bare call that searches for the marker itself: the marker is text, not syntax.
        (json.dumps(MARKER_SEARCH), None, ()),
        # Declared as Hermes, written bare: read, and said so (as the vLLM engine reads it).
        (BODY, "hermes", ("<tool_call> missing",)),
    ],
)
def test_an_answer_is_read_in_the_syntax_it_was_written_in(
    tmp_path: Path, raw_text: str, declared: str | None, repairs: tuple[str, ...]
) -> None:
    row: dict[str, Any] = {"blueprint_id": "bp1", "raw_text": raw_text}
    if declared:  # as `propose --out` records it: in the sampling record
        row["sampling"] = {"tool_format": declared}
    (p,) = ImportEngine(write_lines(tmp_path / "p.jsonl", row)).propose(BLUEPRINTS)
    assert p.error == "" and p.call is not None
    assert p.call.to_dict() == (MARKER_SEARCH if raw_text == json.dumps(MARKER_SEARCH) else CALL)
    assert p.repairs == repairs
    assert p.raw_text == raw_text


def test_an_empty_answer_is_unparsed_and_the_rest_of_the_file_is_read(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "p.jsonl",
        {"blueprint_id": "bp1", "raw_text": ""},
        {"blueprint_id": "bp2", "raw_text": f"<tool_call>{BODY}</tool_call>"},
        {"blueprint_id": "bp1", "raw_text": "  \n", "finish_reason": "stop"},
    )
    empty, called, blank = ImportEngine(path).propose(BLUEPRINTS)
    assert called.valid and called.call is not None and called.call.to_dict() == CALL
    for p in (empty, blank):
        assert not p.valid and p.call is None
        assert p.error == "empty output: the model wrote no JSON"
    assert blank.raw_text == "  \n" and blank.finish_reason == "stop"
