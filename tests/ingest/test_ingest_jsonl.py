"""Importing blueprints and proposals JSONL: idempotent, line-numbered errors, all or nothing."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from store_helpers import blueprint

from codesearch_core.corpora.blueprints import blueprint_from_dict, blueprint_to_dict
from codesearch_core.corpora.jsonl_lines import MAX_LINE_BYTES
from codesearch_core.errors import InputFileError
from codesearch_core.ingest.jsonl import (
    corpus_check_errors,
    import_blueprints_jsonl,
    import_proposals_jsonl,
)
from codesearch_core.store.core import Store

#: The corpus `store_helpers.blueprint` names, with its expected file (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("fixtures_corpus")


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
    first = import_blueprints_jsonl(store, path)
    again = import_blueprints_jsonl(store, path)
    assert (first.new, first.existing, first.errors) == (3, 0, ())
    assert (again.new, again.existing) == (0, 3)
    assert store.blueprints.get("bp-002") == blueprint(2)
    assert store.blueprints.list().total == 3


def test_a_bad_blueprint_line_stores_nothing_and_names_the_line(
    store: Store, tmp_path: Path
) -> None:
    rows: list[Any] = [blueprint_to_dict(blueprint(i)) for i in range(3)]
    rows.insert(1, "{not json")
    path = _jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(InputFileError) as caught:
        import_blueprints_jsonl(store, path)
    assert caught.value.line == 2
    assert str(caught.value).startswith(f"{path}:2: ")
    assert store.counts().blueprints == 0


def test_skip_bad_stores_the_good_blueprint_lines(store: Store, tmp_path: Path) -> None:
    rows: list[Any] = [blueprint_to_dict(blueprint(i)) for i in range(3)]
    rows.insert(2, {"id": "no-intent"})
    path = _jsonl(tmp_path / "bad.jsonl", rows)
    report = import_blueprints_jsonl(store, path, skip_bad=True)
    assert report.new == 3
    assert [e.line for e in report.errors] == [3]
    assert store.counts().blueprints == 3


def test_a_blueprint_conflicting_with_the_store_names_its_line(
    store: Store, tmp_path: Path
) -> None:
    store.blueprints.add([blueprint(1)])
    changed = blueprint_to_dict(replace(blueprint(1), intent="Something else"))
    path = _jsonl(tmp_path / "c.jsonl", [blueprint_to_dict(blueprint(5)), changed])
    with pytest.raises(InputFileError, match="already stored with a different") as caught:
        import_blueprints_jsonl(store, path)
    assert caught.value.line == 2
    assert store.blueprints.get("bp-005") is None
    report = import_blueprints_jsonl(store, path, skip_bad=True)
    assert report.new == 1 and [e.line for e in report.errors] == [2]


def test_a_missing_file_is_an_input_error(store: Store, tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match=r"not found|no such file"):
        import_blueprints_jsonl(store, tmp_path / "missing.jsonl")
    with pytest.raises(InputFileError, match=r"not found|no such file"):
        import_proposals_jsonl(store, tmp_path / "missing.jsonl")


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
    import_blueprints_jsonl(store, _blueprints_file(tmp_path))
    path = _jsonl(tmp_path / "proposals.jsonl", _proposal_lines())
    first = import_proposals_jsonl(store, path)
    again = import_proposals_jsonl(store, path)
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
    import_blueprints_jsonl(store, _blueprints_file(tmp_path))
    lines = _proposal_lines()
    lines.insert(1, {"blueprint_id": "bp-404", "raw_text": "{}"})
    path = _jsonl(tmp_path / "proposals.jsonl", lines)
    with pytest.raises(InputFileError, match="bp-404") as caught:
        import_proposals_jsonl(store, path)
    assert caught.value.line == 2
    assert store.counts().proposals == 0
    report = import_proposals_jsonl(store, path, skip_bad=True)
    assert report.new == 3 and [e.line for e in report.errors] == [2]


# --- blueprints whose expected findings cannot be found ------------------------------------------


def _gone(n: int, *paths: str) -> dict[str, Any]:
    row = blueprint_to_dict(blueprint(n))
    row["expected"] = [{"path": p, "start_line": 1, "end_line": 1} for p in paths]
    return row


def test_a_blueprint_expecting_a_file_its_corpus_lacks_stores_nothing_and_names_the_line(
    store: Store, tmp_path: Path
) -> None:
    rows = [blueprint_to_dict(blueprint(0)), "", _gone(1, "src/app.py", "src/gone.py")]
    path = _jsonl(tmp_path / "bps.jsonl", rows)
    with pytest.raises(InputFileError) as caught:
        import_blueprints_jsonl(store, path)
    assert caught.value.line == 3
    assert str(caught.value) == (
        f"{path}:3: blueprint 'bp-001': expected file missing from corpus 'fixtures': "
        "src/gone.py (no call could find it; fix the expected findings or the corpus)"
    )
    assert store.counts().blueprints == 0


def test_a_blueprint_of_a_corpus_that_is_not_here_stores_nothing(
    store: Store, tmp_path: Path
) -> None:
    row = blueprint_to_dict(replace(blueprint(0), corpus="elsewhere"))
    path = _jsonl(tmp_path / "bps.jsonl", [row])
    with pytest.raises(InputFileError, match=r":1: unknown corpus 'elsewhere' \(known: fixtures\)"):
        import_blueprints_jsonl(store, path)
    assert store.counts().blueprints == 0


def test_skip_bad_stores_the_blueprints_whose_files_exist_and_lists_the_others(
    store: Store, tmp_path: Path
) -> None:
    rows: list[Any] = [
        _gone(0, "a.py"),
        blueprint_to_dict(blueprint(1)),
        "{not json",
        _gone(3, "b.py"),
        blueprint_to_dict(blueprint(4)),
    ]
    path = _jsonl(tmp_path / "bps.jsonl", rows)
    report = import_blueprints_jsonl(store, path, skip_bad=True)
    assert report.new == 2 and list(report.ids) == ["bp-001", "bp-004"]
    assert [e.line for e in report.errors] == [1, 3, 4]
    assert "a.py" in str(report.errors[0]) and "b.py" in str(report.errors[2])


def test_an_upload_can_be_checked_for_missing_expected_files_line_by_line(tmp_path: Path) -> None:
    # What the app's upload check gets: the blueprints it parsed and the uploaded lines.
    lines = [json.dumps(blueprint_to_dict(blueprint(0))), json.dumps(_gone(1, "x.py"))]
    blueprints = [blueprint(0), blueprint_from_dict(_gone(1, "x.py"))]
    errors = corpus_check_errors(blueprints, lines, source="upload.jsonl")
    assert [(e.blueprint_id, e.line) for e in errors] == [("bp-001", 2)]
    assert str(errors[0]).startswith("upload.jsonl:2: blueprint 'bp-001': expected file missing")
    assert corpus_check_errors([blueprint(0)], lines, source="upload.jsonl") == []


@pytest.mark.parametrize(
    ("arguments", "why"),
    [
        ({"paths": ["../../etc"]}, "contains `..`"),
        ({"paths": ["/etc"]}, "is absolute"),
        ({"file_types": ["python3"]}, "unknown rg file type"),
        ({"pattern": "(?<=password=)x"}, "PCRE2"),
    ],
)
def test_a_blueprint_whose_reference_call_cannot_run_is_refused(
    store: Store, tmp_path: Path, arguments: dict[str, object], why: str
) -> None:
    """Bug 4: a blueprint whose reference call had `../../etc` imported without complaint and was
    exported as gold."""
    bad = blueprint_to_dict(blueprint(1))
    bad["reference_call"] = {"name": "ripgrep_search", "arguments": {"pattern": "h", **arguments}}
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=f"bad.jsonl:1: .*reference call cannot run.*{why}"):
        import_blueprints_jsonl(store, path)
    assert store.counts().blueprints == 0


# --- lines too long to be records ----------------------------------------------------------------


def test_a_line_over_the_limit_is_refused_without_storing_anything(
    store: Store, tmp_path: Path
) -> None:
    long_line = json.dumps({"id": "x", "notes": "n" * (MAX_LINE_BYTES + 10)})
    path = _jsonl(tmp_path / "bps.jsonl", [blueprint_to_dict(blueprint(0)), long_line])
    with pytest.raises(InputFileError, match=r":2: line longer than 1,048,576 bytes"):
        import_blueprints_jsonl(store, path)
    assert store.counts().blueprints == 0
    rows: list[Any] = [blueprint_to_dict(blueprint(0)), long_line, blueprint_to_dict(blueprint(1))]
    path = _jsonl(tmp_path / "bps.jsonl", rows)
    report = import_blueprints_jsonl(store, path, skip_bad=True)
    assert report.new == 2 and [e.line for e in report.errors] == [2]


def test_a_conflict_after_a_long_line_still_names_its_line(store: Store, tmp_path: Path) -> None:
    store.blueprints.add([blueprint(1)])
    changed = blueprint_to_dict(replace(blueprint(1), intent="Something else"))
    long_line = "x" * (MAX_LINE_BYTES + 1)
    path = _jsonl(tmp_path / "c.jsonl", [long_line, changed])
    report = import_blueprints_jsonl(store, path, skip_bad=True)
    assert [e.line for e in report.errors] == [1, 2]
    assert "already stored" in str(report.errors[1])
