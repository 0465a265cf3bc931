"""Hostile uploads into the store: a bad file is refused whole with the line that is wrong, or (when
asked to skip bad lines) its good lines are stored and every bad one is listed. Never half a file.

Held elsewhere (see docs/reliability.md): a bad line in the middle, skip_bad, an id that conflicts
with the store (tests/ingest/test_ingest_jsonl.py, tests/cli/test_cli_data.py, tests/studio/test_drafts.py);
line-numbered errors, invalid UTF-8, a BOM and duplicate ids in one file
(tests/corpora/test_blueprints.py, tests/engines/test_engines_import.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from store_helpers import blueprint

from codesearch_core.cli import main
from codesearch_core.corpora.blueprints import blueprint_to_dict
from codesearch_core.errors import CodesearchError, InputFileError
from codesearch_core.ingest.jsonl import import_blueprints_jsonl, import_proposals_jsonl
from codesearch_core.models import Blueprint
from codesearch_core.store.core import Store


def jsonl(path: Path, *rows: dict[str, Any] | str) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def bp_rows(*numbers: int) -> list[dict[str, Any]]:
    return [blueprint_to_dict(blueprint(n)) for n in numbers]


def proposal_row(bp: Blueprint, pattern: str) -> dict[str, Any]:
    return {
        "blueprint_id": bp.id,
        "call": {"name": "ripgrep_search", "arguments": {"pattern": pattern}},
    }


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with Store(tmp_path / "studio.duckdb") as s:
        yield s


# --- ids -----------------------------------------------------------------------------------------


def test_the_same_proposal_twice_in_a_file_is_stored_once(store: Store, tmp_path: Path) -> None:
    bp = blueprint(1)
    store.blueprints.add([bp])
    path = jsonl(tmp_path / "p.jsonl", proposal_row(bp, "a"), proposal_row(bp, "a"))
    report = import_proposals_jsonl(store, path)
    assert (report.new, report.existing) == (1, 1)
    assert len(set(report.ids)) == 1
    stored = store.get_proposal(report.ids[0])
    assert stored is not None and stored.sightings == 2


# --- expected findings that do not exist ---------------------------------------------------------


@pytest.fixture
def corpora(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "corpora"
    (root / "fixtures" / "src").mkdir(parents=True)
    (root / "fixtures" / "src" / "app.py").write_text("handler_1(x)\nhandler_1(y)\n")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(root))
    return root


def gone_file_row() -> dict[str, Any]:
    row = bp_rows(1)[0]
    row["expected"] = [{"path": "src/gone.py", "start_line": 1, "end_line": 1}]
    return row


def test_seeds_verify_names_an_expected_file_that_does_not_exist(
    corpora: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = jsonl(tmp_path / "bp.jsonl", gone_file_row())
    assert main(["seeds", "verify", "--file", str(path)]) == 1
    out = capsys.readouterr().out
    assert "FAIL bp-001" in out and "miss  src/gone.py:1" in out


def test_importing_a_blueprint_whose_expected_file_does_not_exist_is_flagged(
    corpora: Path, store: Store, tmp_path: Path
) -> None:
    path = jsonl(tmp_path / "bp.jsonl", gone_file_row())
    try:
        report = import_blueprints_jsonl(store, path)
    except InputFileError as err:
        assert "src/gone.py" in str(err)
        return
    assert any("src/gone.py" in str(e) for e in report.errors)


# --- content that breaks the decoders ------------------------------------------------------------


@pytest.mark.parametrize("kind", ["blueprints", "proposals"])
def test_a_deeply_nested_line_is_an_error_naming_the_line(
    store: Store, tmp_path: Path, kind: str
) -> None:
    store.blueprints.add([blueprint(1)])
    path = jsonl(tmp_path / "x.jsonl", "[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputFileError, match=":1: "):
        if kind == "blueprints":
            import_blueprints_jsonl(store, path)
        else:
            import_proposals_jsonl(store, path)


def test_a_lone_surrogate_in_imported_raw_text_is_stored_as_its_escape(
    store: Store, tmp_path: Path
) -> None:
    # Valid JSON, and a Python str, but not UTF-8: DuckDB cannot hold it. The text is kept with
    # the surrogate written as the file wrote it, and the other proposals of the import with it.
    store.blueprints.add([blueprint(1)])
    path = tmp_path / "p.jsonl"
    path.write_text(
        '{"blueprint_id": "bp-001", "raw_text": "oops \\ud800 caf\\u00e9", "engine": "e\\udfff"}\n'
        '{"blueprint_id": "bp-001", "raw_text": "fine"}\n',
        encoding="utf-8",
    )
    report = import_proposals_jsonl(store, path)
    assert report.new == 2
    stored = store.proposals_for_blueprint("bp-001")
    assert {p.proposal.raw_text for p in stored} == {"oops \\ud800 café", "fine"}


# --- a 200 MB file -------------------------------------------------------------------------------

_BIG_FILE_PROBE = textwrap.dedent(
    """
    import json, resource, sys
    from pathlib import Path
    from codesearch_core import ingest
    from codesearch_core.errors import CodesearchError
    from codesearch_core.store import Store

    path, kind = Path(sys.argv[1]), sys.argv[2]
    with Store(path.with_suffix(".duckdb")) as store:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            getattr(ingest, f"import_{kind}_jsonl")(store, path)
            error = ""
        except CodesearchError as err:
            error = str(err)
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        counts = store.counts()
    print(json.dumps({"error": error, "grown_mib": grown / 1024,
                      "stored": counts.blueprints + counts.proposals}))
    """
)


def import_big_file(tmp_path: Path, kind: str, first_line: bytes) -> dict[str, Any]:
    """Import a 200 MB file (sparse: a first line, then NUL bytes and no newline) in a child
    process, and report the error and how much its peak memory grew."""
    path = tmp_path / "big.jsonl"
    with path.open("wb") as fh:
        fh.write(first_line)
        fh.truncate(200 * 1024 * 1024)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _BIG_FILE_PROBE, str(path), kind],
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        path.unlink()
    assert proc.returncode == 0, proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


@pytest.mark.slow
def test_a_200_mb_file_with_a_bad_first_line_fails_at_once(tmp_path: Path) -> None:
    report = import_big_file(tmp_path, "blueprints", b"{not json\n")
    assert report["error"].endswith(
        "big.jsonl:1: not valid JSON (Expecting property name "
        "enclosed in double quotes at column 2)"
    )
    assert report["stored"] == 0
    assert report["grown_mib"] < 64  # the rest of the file was never read


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["blueprints", "proposals"])
def test_a_200_mb_file_is_refused_without_loading_it_whole(tmp_path: Path, kind: str) -> None:
    report = import_big_file(tmp_path, kind, b"")
    assert report["error"] and report["stored"] == 0
    assert report["grown_mib"] < 64, report


def test_an_empty_file_imports_nothing_and_a_directory_is_an_input_error(
    store: Store, tmp_path: Path
) -> None:
    (tmp_path / "empty.jsonl").write_bytes(b"")
    jsonl(tmp_path / "blank.jsonl", "", "   ", "\t")
    for name in ("empty.jsonl", "blank.jsonl"):
        report = import_blueprints_jsonl(store, tmp_path / name)
        assert (report.new, report.existing, report.errors) == (0, 0, ())
        assert import_proposals_jsonl(store, tmp_path / name).new == 0
    (tmp_path / "folder.jsonl").mkdir()
    with pytest.raises(InputFileError, match="is a directory, not a JSONL file"):
        import_blueprints_jsonl(store, tmp_path / "folder.jsonl")
    with pytest.raises(CodesearchError):
        import_proposals_jsonl(store, tmp_path / "folder.jsonl")
    assert store.counts().blueprints == store.counts().proposals == 0
