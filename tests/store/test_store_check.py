"""A damaged block: found by `Store.check` (and `codesearch db check`), and, met during normal
work, a StoreError that names the file and how to recover, never DuckDB's raw IO error."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from store_helpers import blueprint

from codesearch_core.cli import main
from codesearch_core.errors import StoreError
from codesearch_core.store.core import Store

HEADERS = 3 * 4096


def store_with_blueprints(path: Path) -> Path:
    with Store(path) as store:
        store.blueprints.add([blueprint(i) for i in range(200)])
    return path


def damage_table(path: Path, table: str) -> None:
    """Overwrite bytes inside the first data block of `table` (its checksum no longer holds)."""
    with duckdb.connect(str(path), read_only=True) as conn:
        (block,) = conn.execute(
            "SELECT min(block_id) FROM pragma_storage_info(?) WHERE block_id >= 0", [table]
        ).fetchone() or (None,)
        block_size = conn.execute("SELECT block_size FROM pragma_database_size()").fetchone()
    assert block is not None and block_size is not None
    with path.open("r+b") as fh:
        fh.seek(HEADERS + int(block) * int(block_size[0]) + 512)
        fh.write(b"\xff" * 64)


def test_a_whole_store_checks_clean(tmp_path: Path) -> None:
    with Store(store_with_blueprints(tmp_path / "s.duckdb")) as store:
        report = store.check()
    assert report.ok and report.damaged == ()
    rows = {t.name: t.rows for t in report.tables}
    assert rows["blueprints"] == 200 and rows["proposals"] == 0
    assert 0 < report.data_blocks <= report.used_blocks


def test_check_names_the_damaged_table_and_reads_the_others(tmp_path: Path) -> None:
    path = store_with_blueprints(tmp_path / "s.duckdb")
    damage_table(path, "blueprint_revisions")
    with Store(path) as store:
        report = store.check()
    assert not report.ok
    (bad,) = report.damaged
    assert bad.name == "blueprint_revisions" and "checksum" in bad.error
    assert {t.name: t.rows for t in report.tables}["blueprints"] == 200


def test_damage_met_during_work_is_a_store_error_with_the_way_out(tmp_path: Path) -> None:
    path = store_with_blueprints(tmp_path / "s.duckdb")
    damage_table(path, "blueprint_revisions")
    with Store(path) as store, pytest.raises(StoreError) as err:
        store.blueprints.revisions(blueprint(1).id)
    message = str(err.value)
    assert f"the store {path} is damaged" in message
    assert "Restore the file from a backup" in message and "codesearch db check" in message
    assert "IO Error" not in message


def test_cli_db_check_exits_1_and_lists_the_damage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = store_with_blueprints(tmp_path / "s.duckdb")
    assert main(["db", "check", "--db", str(path)]) == 0
    assert "no damage found" in capsys.readouterr().out
    damage_table(path, "blueprint_revisions")
    assert main(["db", "check", "--db", str(path)]) == 1
    captured = capsys.readouterr()
    assert "blueprint_revisions    DAMAGED: Corrupt database file" in captured.out
    assert "damaged (blueprint_revisions)" in captured.err
