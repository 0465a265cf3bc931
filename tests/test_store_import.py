"""Importing blueprints and proposals JSONL: idempotent, line-numbered errors, all or nothing."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from store_helpers import blueprint

from codesearch_core.blueprints import blueprint_to_dict
from codesearch_core.errors import InputFileError
from codesearch_core.store import Store


@pytest.fixture(autouse=True)
def corpora(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The corpus the test blueprints name, holding their expected file."""
    root = tmp_path / "corpora"
    (root / "fixtures" / "src").mkdir(parents=True)
    (root / "fixtures" / "src" / "app.py").write_text("handler_1(x)\n" * 10, encoding="utf-8")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(root))
    return root


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store(tmp_path / "studio.duckdb")
    yield s
    s.close()


def _jsonl(path: Path, rows: list[Any]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _blueprints_file(tmp_path: Path, n: int = 3, name: str = "bps.jsonl") -> Path:
    return _jsonl(tmp_path / name, [blueprint_to_dict(blueprint(i)) for i in range(n)])


def test_importing_blueprints_twice_adds_them_once(store: Store, tmp_path: Path) -> None:
    path = _blueprints_file(tmp_path)
    first = store.import_blueprints_jsonl(path)
    again = store.import_blueprints_jsonl(path)
    assert (first.new, first.existing, first.errors) == (3, 0, ())
    assert (again.new, again.existing) == (0, 3)
    assert store.get_blueprint("bp-002") == blueprint(2)
    assert store.list_blueprints().total == 3


def test_a_bad_blueprint_line_stores_nothing_and_names_the_line(
    store: Store, tmp_path: Path
) -> None:
    rows: list[Any] = [blueprint_to_dict(blueprint(i)) for i in range(3)]
    rows.insert(1, "{not json")
    path = _jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(InputFileError) as caught:
        store.import_blueprints_jsonl(path)
    assert caught.value.line == 2
    assert str(caught.value).startswith(f"{path}:2: ")
    assert store.counts().blueprints == 0


def test_skip_bad_stores_the_good_blueprint_lines(store: Store, tmp_path: Path) -> None:
    rows: list[Any] = [blueprint_to_dict(blueprint(i)) for i in range(3)]
    rows.insert(2, {"id": "no-intent"})
    path = _jsonl(tmp_path / "bad.jsonl", rows)
    report = store.import_blueprints_jsonl(path, skip_bad=True)
    assert report.new == 3
    assert [e.line for e in report.errors] == [3]
    assert store.counts().blueprints == 3


def test_a_blueprint_conflicting_with_the_store_names_its_line(
    store: Store, tmp_path: Path
) -> None:
    store.add_blueprints([blueprint(1)])
    changed = blueprint_to_dict(replace(blueprint(1), intent="Something else"))
    path = _jsonl(tmp_path / "c.jsonl", [blueprint_to_dict(blueprint(5)), changed])
    with pytest.raises(InputFileError, match="already stored with a different") as caught:
        store.import_blueprints_jsonl(path)
    assert caught.value.line == 2
    assert store.get_blueprint("bp-005") is None
    report = store.import_blueprints_jsonl(path, skip_bad=True)
    assert report.new == 1 and [e.line for e in report.errors] == [2]


def test_a_missing_file_is_an_input_error(store: Store, tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match=r"not found|no such file"):
        store.import_blueprints_jsonl(tmp_path / "missing.jsonl")
    with pytest.raises(InputFileError, match=r"not found|no such file"):
        store.import_proposals_jsonl(tmp_path / "missing.jsonl")


def _proposal_lines() -> list[Any]:
    return [
        {
            "blueprint_id": "bp-000",
            "engine": "vllm",
            "model": "qwen",
            "raw_text": '{"name": "ripgrep_search", "arguments": {"pattern": "handler"}}',
            "prompt_tokens": 120,
        },
        {
            "blueprint_id": "bp-001",
            "engine": "batch",
            "model": "qwen",
            "call": {
                "name": "ast_grep_search",
                "arguments": {"pattern": "f($A)", "language": "py"},
            },
        },
        {"blueprint_id": "bp-002", "model": "qwen", "raw_text": '{"name": "ripgrep_search", "ar'},
    ]


def test_importing_proposals_parses_repairs_and_is_idempotent(store: Store, tmp_path: Path) -> None:
    store.import_blueprints_jsonl(_blueprints_file(tmp_path))
    path = _jsonl(tmp_path / "proposals.jsonl", _proposal_lines())
    first = store.import_proposals_jsonl(path)
    again = store.import_proposals_jsonl(path)
    assert (first.new, first.existing) == (3, 0)
    assert (again.new, again.existing) == (0, 3)
    stored = [store.get_proposal(i) for i in first.ids]
    assert all(s is not None for s in stored)
    valid = [s.proposal.valid for s in stored if s is not None]
    assert valid == [True, True, False]
    repaired = stored[1]
    assert repaired is not None and repaired.proposal.call is not None
    assert repaired.proposal.call.arguments["language"] == "python"  # "py" repaired
    assert repaired.proposal.repairs
    assert stored[0] is not None and stored[0].proposal.prompt_tokens == 120
    assert stored[0].sightings == 2


def test_a_proposal_for_an_unknown_blueprint_stores_nothing(store: Store, tmp_path: Path) -> None:
    store.import_blueprints_jsonl(_blueprints_file(tmp_path))
    lines = _proposal_lines()
    lines.insert(1, {"blueprint_id": "bp-404", "raw_text": "{}"})
    path = _jsonl(tmp_path / "proposals.jsonl", lines)
    with pytest.raises(InputFileError, match="bp-404") as caught:
        store.import_proposals_jsonl(path)
    assert caught.value.line == 2
    assert store.counts().proposals == 0
    report = store.import_proposals_jsonl(path, skip_bad=True)
    assert report.new == 3 and [e.line for e in report.errors] == [2]
