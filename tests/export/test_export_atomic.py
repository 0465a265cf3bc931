"""An export is all or nothing: a failure, a kill or a full disk never leaves a partial file under
the final name, and the previous export stays intact."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from store_helpers import blueprint, executed, proposal

from codesearch_core.errors import StoreError
from codesearch_core.export.writers import ExportFormat, export, export_path, write_jsonl_atomic
from codesearch_core.store import PROPOSAL
from codesearch_core.store.core import Store
from codesearch_core.tools.schemas import parse_tool_call

PREVIOUS = b'{"id": 0, "query": "the previous export"}\n'


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_failure_mid_export_keeps_the_previous_file(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_bytes(PREVIOUS)

    def rows() -> Iterator[dict[str, Any]]:
        for i in range(10_000):
            if i == 5_000:
                raise RuntimeError("the store went away")
            yield {"id": i, "query": "x" * 100}

    with pytest.raises(RuntimeError):
        write_jsonl_atomic(out, rows())
    assert out.read_bytes() == PREVIOUS
    assert _leftovers(tmp_path) == []


def test_a_successful_write_replaces_the_file_whole(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_bytes(PREVIOUS)
    result = write_jsonl_atomic(out, ({"id": i} for i in range(3)))
    assert result.rows == 3
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == [0, 1, 2]
    assert _leftovers(tmp_path) == []


_KILLED_MID_EXPORT = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from codesearch_core.export.writers import write_jsonl_atomic

    def rows():
        for i in range(100_000):
            if i == 50_000:
                os.kill(os.getpid(), signal.SIGKILL)  # no cleanup runs: like a crash or kill -9
            yield {"id": i, "query": "find the handlers " * 5}

    write_jsonl_atomic(Path(sys.argv[1]), rows())
    """
)


def test_a_killed_export_leaves_the_previous_file_and_its_debris_is_swept(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out.jsonl"
    out.write_bytes(PREVIOUS)
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_MID_EXPORT, str(out)], timeout=120, check=False
    )
    assert killed.returncode == -9
    assert out.read_bytes() == PREVIOUS
    [debris] = _leftovers(tmp_path)
    assert (tmp_path / debris).stat().st_size > 0  # it really was killed mid-write
    write_jsonl_atomic(out, iter([{"id": 1}]))
    assert _leftovers(tmp_path) == []  # the dead process's temp file is gone
    assert out.read_text() == '{"id":1}\n'


_DISK_FULL = textwrap.dedent(
    """
    import resource, signal, sys
    from pathlib import Path
    from codesearch_core.errors import StoreError
    from codesearch_core.export.writers import ExportFormat, export
    from codesearch_core.store.core import Store
    from codesearch_core.store.filters import QueueFilters

    store = Store(sys.argv[1])
    filters = QueueFilters(language=sys.argv[4] or None)
    # A file-size limit makes write() fail with EFBIG the way a full disk fails with ENOSPC.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[3]),) * 2)
    try:
        export(store, ExportFormat.XLAM, Path(sys.argv[2]), filters=filters)
    except StoreError as err:
        print(f"error: {err}")
        sys.exit(2)
    """
)


@pytest.fixture
def previous_export(tmp_path: Path) -> tuple[Path, Path]:
    """A store with 40 accepted items, and a complete earlier export of it with its manifest."""
    db = tmp_path / "studio.duckdb"
    out = tmp_path / "exports" / "xlam.jsonl"
    with Store(db) as store:
        bps = [
            blueprint(i, intent=f"Find the calls to handler_{i} " + "x" * 200) for i in range(40)
        ]
        store.blueprints.add(bps)
        ids = store.add_proposals([proposal(bp) for bp in bps])
        executed(store, ids)
        for pid in ids:
            store.queue(PROPOSAL).decide(pid, "accept", "ann")
        export(store, ExportFormat.XLAM, out)
    return db, out


def _export_with_file_size_limit(db: Path, out: Path, limit: int, language: str = "") -> str:
    done = subprocess.run(
        [sys.executable, "-c", _DISK_FULL, str(db), str(out), str(limit), language],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    return done.stdout


def test_a_full_disk_is_a_clear_error_and_loses_nothing(
    previous_export: tuple[Path, Path],
) -> None:
    db, out = previous_export
    manifest = out.parent / "xlam.jsonl.manifest.json"
    before = out.read_bytes(), manifest.read_bytes()
    message = _export_with_file_size_limit(db, out, 20_000)
    assert "could not write the export" in message and "File too large" in message
    assert "the previous file is unchanged" in message
    assert (out.read_bytes(), manifest.read_bytes()) == before
    assert _leftovers(out.parent) == []


def test_a_full_disk_while_writing_the_manifest_changes_neither_file(
    previous_export: tuple[Path, Path],
) -> None:
    db, out = previous_export
    manifest = out.parent / "xlam.jsonl.manifest.json"
    before = out.read_bytes(), manifest.read_bytes()
    # Nothing matches "rust": the data file is empty and fits; the manifest does not.
    message = _export_with_file_size_limit(db, out, 100, language="rust")
    assert "could not write the manifest" in message and "File too large" in message
    assert (out.read_bytes(), manifest.read_bytes()) == before
    assert _leftovers(out.parent) == []


def test_exporting_over_the_store_itself_is_refused(tmp_path: Path) -> None:
    with Store(tmp_path / "studio.duckdb") as store, pytest.raises(StoreError, match="the store"):
        export(store, ExportFormat.XLAM, tmp_path / "studio.duckdb")


def test_exporting_to_a_directory_is_refused(tmp_path: Path) -> None:
    with Store(tmp_path / "studio.duckdb") as store, pytest.raises(StoreError, match="directory"):
        export(store, ExportFormat.XLAM, tmp_path)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("../x.jsonl", "not a file name inside the exports folder"),
        ("/etc/x.jsonl", "not a file name inside the exports folder"),
        ("sub/../../x.jsonl", "not a file name inside the exports folder"),
        ("out/x.jsonl", "leads outside the exports folder"),  # `out` is a link out of it
        ("  ", "give the export a file name"),
    ],
)
def test_the_app_writes_exports_only_inside_the_exports_folder(
    tmp_path: Path, name: str, message: str
) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    (folder / "out").symlink_to(tmp_path)
    with pytest.raises(StoreError, match=message):
        export_path(name, folder)
    assert export_path("sub/xlam.jsonl", folder) == folder.resolve() / "sub" / "xlam.jsonl"


def test_a_reference_call_that_cannot_run_is_no_gold_answer(tmp_path: Path) -> None:
    """A blueprint stored before imports checked its reference call (`../../etc`): the export
    skips it as gold, in both the answer and the preference layouts, and counts it."""
    bad = blueprint(1)
    escaping = parse_tool_call(
        {"name": "ripgrep_search", "arguments": {"pattern": "h", "paths": ["../../etc"]}}
    )
    with Store(tmp_path / "studio.duckdb") as store:
        store.blueprints.add([blueprint(0), replace(bad, reference_call=escaping)])
        rejected = store.add_proposals([proposal(bad, "x")])
        executed(store, rejected, f1=0.0)
        store.queue(PROPOSAL).decide(rejected[0], "reject", "ann")
        manifest = export(store, ExportFormat.XLAM, tmp_path / "x.jsonl", include_reference=True)
        assert manifest.rows == 1 and manifest.counts["reference_outside_corpus"] == 1
        pairs = export(store, ExportFormat.PAIRS, tmp_path / "p.jsonl")
        assert pairs.rows == 0  # no chosen answer left for the rejected proposal
