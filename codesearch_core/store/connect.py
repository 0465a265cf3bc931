"""Opening a store file: a clear StoreError for every file that cannot be used, then migration.

The checks run before DuckDB touches the file where they can (a directory, an empty file, a SQLite
database, random bytes); DuckDB's own errors are translated (a lock held by another process, a
truncated file); a DuckDB file without our schema_version table is someone else's.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import BinaryIO, Final

import duckdb

from codesearch_core.errors import StoreError
from codesearch_core.store.duckdb_file import BLOCK_START, least_size
from codesearch_core.store.schema import (
    SCHEMA_VERSION,
    STORE_TABLES,
    apply_migrations,
    read_schema_version,
    user_tables,
)

#: Bytes 8-11 of every DuckDB database file.
_DUCKDB_MAGIC: Final = b"DUCK"
#: Tries of the size check while the headers change under it (another process checkpointing).
_SIZE_CHECK_TRIES: Final = 3
#: Never reach for the network: a foreign file must not make DuckDB download a reader for it.
_DUCKDB_CONFIG: Final = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
#: A store idle this long lets go of the file, so `codesearch db ...` can open it while the studio
#: runs (DuckDB lets one process open a file at a time). Reopening costs ~40 ms at 300,000
#: proposals; a reviewer working faster than this never pays it.
IDLE_RELEASE_S: Final = 2.0
_LOCK_POLL_S: Final = 0.05


def connect(
    path: Path, *, wait_s: float = 0.0, on_wait: Callable[[str], None] | None = None
) -> duckdb.DuckDBPyConnection:
    """Open `path`; while another process holds its lock, try again for up to `wait_s` seconds
    (the studio lets go of the file when idle, so a CLI command only has to wait for that).
    `on_wait` is told once, with the reason, when waiting starts."""
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
    deadline = time.monotonic() + wait_s
    told = False
    while True:
        try:
            return duckdb.connect(str(path), config=dict(_DUCKDB_CONFIG))
        except duckdb.IOException as err:
            text = str(err)
            if "Could not set lock" not in text and "Conflicting lock" not in text:
                raise StoreError(_damaged(path, text)) from err
            pid = re.search(r"PID (\d+)", text)
            holder = f"process {pid.group(1)}" if pid else "another process"
            if time.monotonic() >= deadline:
                waited = f" (waited {wait_s:g} s)" if wait_s > 0 else ""
                raise StoreError(
                    f"the store {path} is in use by {holder}{waited}: DuckDB lets one process "
                    f"open a file at a time. The studio lets go of it after "
                    f"{IDLE_RELEASE_S:g} s without a click; a running codesearch command holds it "
                    f"until it ends. Try again then, or use another file {where}."
                ) from err
            if on_wait is not None and not told:
                on_wait(f"the store {path} is in use by {holder}; waiting up to {wait_s:g} s")
                told = True
            time.sleep(_LOCK_POLL_S)
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
        _check_size(path)
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


def _check_size(path: Path) -> None:
    """Refuse a file shorter than the blocks it uses: a cut copy or a full disk.

    Reads the 12 KiB of headers and the free list (see `duckdb_file.least_size`), so it costs about
    the same for any store size; DuckDB itself would open such a file and fail later, mid-work,
    with a raw IO error. Not the header's `block_count`: DuckDB truncates the free blocks at the
    end of the file after writing the header, so a whole file is often shorter than that.
    """
    for _ in range(_SIZE_CHECK_TRIES):
        try:
            with path.open("rb") as fh:
                size = fh.seek(0, 2)
                headers = _read_headers(fh)
                if len(headers) < BLOCK_START:
                    raise StoreError(
                        _damaged(path, f"the file is {size:,} bytes, shorter than its headers")
                    )
                wanted = least_size(fh)
                if wanted is None or size >= wanted:
                    return
                # Refuse only what held still while it was read: another process that
                # checkpoints meanwhile grows the file, writes a header, then shrinks it.
                steady = _read_headers(fh) == headers and fh.seek(0, 2) == size
        except OSError as err:
            raise StoreError(f"cannot read the store {path}: {err.strerror}") from err
        if steady:
            raise StoreError(
                _damaged(path, f"the file is {size:,} bytes but its blocks in use need {wanted:,}")
            )
    # It kept changing: another process holds the file and is writing it, and opening it says so.


def _read_headers(fh: BinaryIO) -> bytes:
    fh.seek(0)
    return fh.read(BLOCK_START)


def prepare(conn: duckdb.DuckDBPyConnection, path: Path) -> int:
    """Create or migrate the store in `conn`; returns the schema version the file had (0: new)."""
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
        return version
    except duckdb.Error as err:
        raise StoreError(_damaged(path, str(err))) from err


class IdleReleasingConnection:
    """A store file's DuckDB connection that lets go of the file when idle.

    Thread-safe. `cursor()` hands out a cursor of its own per call (opening the file again if it
    was let go of); `release()` takes it back. Once no cursor has been out for `idle_release_s`,
    the connection is closed so that another process can open the file.
    """

    def __init__(
        self,
        path: Path,
        *,
        idle_release_s: float | None,
        lock_wait_s: float,
        on_wait: Callable[[str], None] | None = None,
    ) -> None:
        self.path = path
        self._idle_release_s = idle_release_s
        self._lock_wait_s = lock_wait_s
        conn = connect(path, wait_s=lock_wait_s, on_wait=on_wait)
        try:
            #: The version the file had before this process migrated it (0: a new file).
            self.found_version = prepare(conn, path)
            self.schema_version = SCHEMA_VERSION
        except BaseException:
            conn.close()
            raise
        self._conn: duckdb.DuckDBPyConnection | None = conn
        self._lock = threading.Lock()
        self._closed = False
        #: Cursors out; the file is let go of only when none are.
        self._busy = 0
        self._last_used = time.monotonic()
        self._timer: threading.Timer | None = None
        with self._lock:
            self._arm(idle_release_s)

    def cursor(self) -> duckdb.DuckDBPyConnection:
        with self._lock:
            if self._closed:
                raise StoreError(f"the store {self.path} is closed")
            if self._conn is None:
                # Let go of while idle: open it again, waiting while a CLI command holds it.
                self._conn = connect(self.path, wait_s=self._lock_wait_s)
            try:
                cur = self._conn.cursor()
            except duckdb.Error as err:
                raise StoreError(f"the store {self.path} is closed ({err})") from err
            self._busy += 1
            return cur

    def release(self, cur: duckdb.DuckDBPyConnection) -> None:
        cur.close()
        with self._lock:
            self._busy -= 1
            self._last_used = time.monotonic()
            if self._timer is None:
                self._arm(self._idle_release_s)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _arm(self, after: float | None) -> None:
        """(Under `_lock`.) One timer at a time, re-armed for what is left when it fires early, so
        a busy store starts no thread per call."""
        if after is None or self._closed or self._conn is None:
            return
        self._timer = threading.Timer(after, self._let_go_if_idle)
        self._timer.daemon = True
        self._timer.start()

    def _let_go_if_idle(self) -> None:
        with self._lock:
            self._timer = None
            if self._busy or self._closed or self._conn is None or self._idle_release_s is None:
                return  # a busy connection re-arms the timer when its last cursor comes back
            left = self._last_used + self._idle_release_s - time.monotonic()
            if left > 0:
                self._arm(left)
                return
            conn, self._conn = self._conn, None
            # Closing checkpoints the write-ahead log into the file, so a reader sees every write.
            with suppress(duckdb.Error):
                conn.close()
