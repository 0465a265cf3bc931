"""Importing proposals made elsewhere: parsed like live output, bad lines named by number."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codesearch_core.engines.base import proposal_to_dict
from codesearch_core.engines.import_engine import ImportEngine
from codesearch_core.engines.mutations import MutationEngine
from codesearch_core.engines.repair import LENGTH_ERROR
from codesearch_core.errors import InputFileError
from codesearch_core.models import Blueprint, Span
from codesearch_core.schemas import parse_tool_call

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
    bad.write_bytes(b'{"blueprint_id": "bp1", "call": null}\n{"x": "caf\xe9"}\n')
    with pytest.raises(InputFileError, match="not UTF-8"):
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
