"""Opening a store file: a clear StoreError for every file that cannot be used, then migration.

The checks run before DuckDB touches the file where they can (a directory, an empty file, a SQLite
database, random bytes); DuckDB's own errors are translated (a lock held by another process, a
truncated file); a DuckDB file without our schema_version table is someone else's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

import duckdb

from codesearch_core.errors import StoreError
from codesearch_core.store.schema import (
    SCHEMA_VERSION,
    STORE_TABLES,
    apply_migrations,
    read_schema_version,
    user_tables,
)

#: Bytes 8-11 of every DuckDB database file.
_DUCKDB_MAGIC: Final = b"DUCK"
#: Never reach for the network: a foreign file must not make DuckDB download a reader for it.
_DUCKDB_CONFIG: Final = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}


def connect(path: Path) -> duckdb.DuckDBPyConnection:
    where = "(set --db or CODESEARCH_DB to use another file)"
    if path.is_dir():
        raise StoreError(f"{path} is a directory; the store must be a file {where}")
    if path.exists():
        _check_header(path, where)
    else:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise StoreError(
                f"cannot create the folder for the store {path}: {err.strerror}"
            ) from err
    try:
        return duckdb.connect(str(path), config=dict(_DUCKDB_CONFIG))
    except duckdb.IOException as err:
        text = str(err)
        if "Could not set lock" in text or "Conflicting lock" in text:
            pid = re.search(r"PID (\d+)", text)
            holder = f"process {pid.group(1)}" if pid else "another process"
            raise StoreError(
                f"the store {path} is in use by {holder}: DuckDB lets one process write a file at a "
                f"time. Stop that process (the Streamlit app or another codesearch command) or "
                f"use another file {where}."
            ) from err
        raise StoreError(_damaged(path, text)) from err
    except duckdb.Error as err:
        raise StoreError(_damaged(path, str(err))) from err


def _damaged(path: Path, detail: str) -> str:
    return (
        f"cannot open the store {path}: {detail}. The file is damaged or truncated: restore it from "
        f"a backup, or move it away to start a new store."
    )


def _check_header(path: Path, where: str) -> None:
    try:
        with path.open("rb") as fh:
            head = fh.read(16)
    except OSError as err:
        raise StoreError(f"cannot read the store {path}: {err.strerror}") from err
    if head[8:12] == _DUCKDB_MAGIC:
        return
    if not head:
        what = "an empty file"
    elif head.startswith(b"SQLite format 3"):
        what = "a SQLite database"
    else:
        what = "not a DuckDB database"
    raise StoreError(
        f"{path} is {what}, not a codesearch store. Move it away (a new store is then created "
        f"there) {where}."
    )


def prepare(conn: duckdb.DuckDBPyConnection, path: Path) -> int:
    try:
        tables = user_tables(conn)
        version = read_schema_version(conn)
        if version == 0 and tables:
            raise StoreError(
                f"{path} is a DuckDB database but not a codesearch store (it has tables "
                f"{', '.join(sorted(tables)[:5])} and no schema_version); use another file "
                "(--db or CODESEARCH_DB)."
            )
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{path} was written by a newer codesearch-gym (schema {version}, this build knows "
                f"{SCHEMA_VERSION}): upgrade codesearch-gym to open it."
            )
        if version < SCHEMA_VERSION:
            apply_migrations(conn, current=version)
        missing = STORE_TABLES - user_tables(conn)
        if missing:
            raise StoreError(_damaged(path, f"tables missing: {', '.join(sorted(missing))}"))
        return SCHEMA_VERSION
    except duckdb.Error as err:
        raise StoreError(_damaged(path, str(err))) from err
