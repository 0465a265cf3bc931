"""Reading every stored row back, so DuckDB verifies the checksum of every data block.

DuckDB checks a block's checksum when it reads the block, and reads lazily: a damaged block is
only found by the query that needs it, possibly weeks later. `check_store` reads every column of
every table once (one aggregate per table) and reports what could not be read, table by table.
Index blocks are not reached this way (DuckDB loads them lazily, and a scan does not use them);
the report counts the data blocks it verified against all the blocks the file uses.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

#: What DuckDB says about a block that fails its checksum, or a file cut under a table's blocks.
DAMAGE_MARKERS: tuple[str, ...] = (
    "Corrupt database file",
    "checksum",
    "Could not read enough bytes",
    "could not read all bytes",
)


def is_damage(err: BaseException) -> bool:
    text = str(err)
    return isinstance(err, duckdb.Error) and any(m in text for m in DAMAGE_MARKERS)


@dataclass(frozen=True, slots=True)
class TableCheck:
    name: str
    rows: int | None  # None when the table could not be read
    error: str = ""


@dataclass(frozen=True, slots=True)
class StoreCheck:
    tables: tuple[TableCheck, ...]
    data_blocks: int  # blocks the tables' data live in, each read and checksummed
    used_blocks: int  # every block the file uses (data, indexes, catalog)

    @property
    def ok(self) -> bool:
        return all(t.rows is not None for t in self.tables)

    @property
    def damaged(self) -> tuple[TableCheck, ...]:
        return tuple(t for t in self.tables if t.rows is None)


def check_store(cur: duckdb.DuckDBPyConnection) -> StoreCheck:
    names = [
        str(r[0])
        for r in cur.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
            "ORDER BY table_name"
        ).fetchall()
    ]
    tables: list[TableCheck] = []
    blocks: set[int] = set()
    for name in names:
        quoted = '"' + name.replace('"', '""') + '"'
        try:
            # hash() of every column forces every data block of the table to be read.
            row = cur.execute(f"SELECT count(*), sum(hash(COLUMNS(*))) FROM {quoted}").fetchone()
            rows = int(row[0]) if row else 0
            blocks.update(
                int(r[0])
                for r in cur.execute(
                    "SELECT DISTINCT block_id FROM pragma_storage_info(?) WHERE block_id >= 0",
                    [name],
                ).fetchall()
            )
            tables.append(TableCheck(name, rows))
        except duckdb.Error as err:
            tables.append(TableCheck(name, None, str(err).splitlines()[0]))
    size = cur.execute("SELECT total_blocks, free_blocks FROM pragma_database_size()").fetchone()
    used = int(size[0]) - int(size[1]) if size else len(blocks)
    return StoreCheck(tuple(tables), len(blocks), used)
