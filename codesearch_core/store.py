"""The curation store: one DuckDB file holding blueprints, proposals, runs, grades and decisions.

One `Store` per process (the app caches it); it keeps one DuckDB connection and gives every call its
own cursor, so many Streamlit sessions and threads can use it at once. Every write is one
transaction: it commits whole or leaves nothing, and a transaction that loses a write-write conflict
to another thread is retried on the new state. DuckDB lets only one process open a file for writing;
a second one gets a StoreError that says so at once.

Tables and the decision log's rules: `store_schema`. Read queries: `store_queries`. JSONL imports:
`store_import`. Exports: `export`.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime
from os import PathLike
from pathlib import Path
from typing import Any, Final, TypeVar

import duckdb
import pandas as pd

from codesearch_core import config, store_dashboard, store_queries
from codesearch_core.blueprints import blueprint_to_dict
from codesearch_core.errors import StoreError
from codesearch_core.models import (
    Blueprint,
    DecisionAction,
    Grade,
    Proposal,
    Reward,
    RunResult,
    canonical_json,
)
from codesearch_core.store_rows import (
    BLUEPRINT_COLUMNS,
    PROPOSAL_COLUMNS,
    blueprint_from_row,
    blueprint_row,
    first_row,
    proposal_id,
    proposal_row,
    utc_now,
)
from codesearch_core.store_schema import (
    SCHEMA_VERSION,
    STORE_TABLES,
    apply_migrations,
    read_schema_version,
    user_tables,
)
from codesearch_core.store_types import (
    BlueprintConflictError,
    BlueprintFilters,
    BlueprintPage,
    BlueprintRevision,
    DashboardStats,
    DecisionEvent,
    ExportRow,
    ImportReport,
    PendingExecution,
    QueueFilters,
    QueueItem,
    QueuePage,
    ReviewItem,
    StoreCounts,
    StoredProposal,
)

T = TypeVar("T")

#: Bytes 8-11 of every DuckDB database file.
_DUCKDB_MAGIC: Final = b"DUCK"
#: Never reach for the network: a foreign file must not make DuckDB download a reader for it.
_DUCKDB_CONFIG: Final = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
_MAX_CONFLICT_RETRIES: Final = 60
#: A constraint error can be a race (another thread stored the same key since our check); re-checking
#: on a fresh snapshot settles it, so a few retries suffice.
_MAX_CONSTRAINT_RETRIES: Final = 5
_MAX_TEXT: Final = 20_000


@dataclass(frozen=True, slots=True)
class _Attempt:
    retryable: bool
    error: duckdb.Error


class Store:
    """A handle on one store file. Thread-safe; close it (or use `with`) when done."""

    def __init__(self, path: str | PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else config.db_path()
        self._conn = _connect(self.path)
        self._lock = threading.Lock()
        try:
            self.schema_version = _prepare(self._conn, self.path)
        except BaseException:
            self._conn.close()
            raise

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- plumbing --------------------------------------------------------------------------------

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        with self._lock:
            try:
                return self._conn.cursor()
            except duckdb.Error as err:
                raise StoreError(f"the store {self.path} is closed ({err})") from err

    def _read(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        cur = self._cursor()
        try:
            return fn(cur)
        except duckdb.Error as err:
            raise StoreError(f"could not read the store {self.path}: {err}") from err
        finally:
            cur.close()

    def _write(self, fn: Callable[[duckdb.DuckDBPyConnection], T], *, what: str) -> T:
        """Run `fn` in a transaction; retry it whole when it lost a race with another writer."""
        conflicts = constraints = 0
        delay = 0.0005
        while True:
            attempt = self._attempt(fn)
            if not isinstance(attempt, _Attempt):
                return attempt
            if isinstance(attempt.error, duckdb.ConstraintException):
                constraints += 1
                give_up = constraints > _MAX_CONSTRAINT_RETRIES
            else:
                conflicts += 1
                give_up = conflicts > _MAX_CONFLICT_RETRIES
            if not attempt.retryable or give_up:
                raise StoreError(
                    f"could not {what} in {self.path}: {attempt.error}. Nothing was written."
                ) from attempt.error
            time.sleep(random.uniform(0, delay))
            delay = min(delay * 2, 0.05)

    def _attempt(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T | _Attempt:
        cur = self._cursor()
        try:
            cur.execute("BEGIN TRANSACTION")
            try:
                result = fn(cur)
                cur.execute("COMMIT")
            except duckdb.Error as err:
                _rollback(cur)
                retryable = isinstance(
                    err, duckdb.TransactionException | duckdb.ConstraintException
                )
                return _Attempt(retryable, err)
            except BaseException:
                _rollback(cur)
                raise
            return result
        except OSError as err:
            raise StoreError(f"could not write to {self.path}: {err}") from err
        finally:
            cur.close()

    # --- blueprints ------------------------------------------------------------------------------

    def add_blueprints(
        self, blueprints: Sequence[Blueprint], *, source: str = "api", skip_bad: bool = False
    ) -> ImportReport:
        """Store new blueprints; identical ones already stored count as existing (idempotent).

        A blueprint whose id is stored with other content is a conflict: an InputFileError is raised
        and nothing stored, unless `skip_bad` (then it is left out and listed in the report). Edits
        go through `upsert_blueprint`.
        """
        return self._write(
            lambda cur: _add_blueprints(cur, blueprints, source=source, skip_bad=skip_bad),
            what="add blueprints",
        )

    def upsert_blueprint(self, blueprint: Blueprint, *, source: str = "app") -> str:
        """Create or replace the blueprint with this id; returns "created", "updated" or "unchanged".

        Every change appends the new version to `blueprint_revisions`, so an edit never loses the
        old text. Another blueprint with the same intent, corpus and call is a StoreError.
        """
        return self._write(
            lambda cur: _upsert_blueprint(cur, blueprint, source=source), what="save the blueprint"
        )

    def get_blueprint(self, blueprint_id: str) -> Blueprint | None:
        return self._read(lambda cur: store_queries.get_blueprint(cur, blueprint_id))

    def get_blueprints(self, blueprint_ids: Sequence[str]) -> list[Blueprint]:
        """The stored ones among these ids, in the order given."""
        return self._read(lambda cur: store_queries.get_blueprints(cur, blueprint_ids))

    def list_blueprints(
        self, filters: BlueprintFilters | None = None, *, offset: int = 0, limit: int = 50
    ) -> BlueprintPage:
        return self._read(
            lambda cur: store_queries.list_blueprints(
                cur, filters or BlueprintFilters(), offset=offset, limit=limit
            )
        )

    def blueprint_revisions(self, blueprint_id: str) -> tuple[BlueprintRevision, ...]:
        return self._read(lambda cur: store_queries.blueprint_revisions(cur, blueprint_id))

    # --- proposals, runs, grades -----------------------------------------------------------------

    def add_proposals(self, proposals: Sequence[Proposal]) -> list[str]:
        """Store proposals; returns their ids in input order. A call already proposed for the same
        blueprint is stored once (its id is returned again and the sighting recorded)."""
        report = self._write(
            lambda cur: _add_proposals(cur, proposals, source="api"), what="add proposals"
        )
        return list(report.ids)

    def add_proposals_report(self, proposals: Sequence[Proposal], *, source: str) -> ImportReport:
        """`add_proposals`, reporting how many were new."""
        return self._write(
            lambda cur: _add_proposals(cur, proposals, source=source), what="add proposals"
        )

    def get_proposal(self, proposal_id: str) -> StoredProposal | None:
        return self._read(lambda cur: store_queries.get_proposal(cur, proposal_id))

    def proposals_for_blueprint(self, blueprint_id: str) -> tuple[StoredProposal, ...]:
        return self._read(lambda cur: store_queries.proposals_for_blueprint(cur, blueprint_id))

    def pending_verification(
        self, limit: int = 256, *, include_invalid: bool = False
    ) -> list[PendingExecution]:
        """Proposals never executed, oldest first: valid ones, and invalid ones if asked (their
        `call_json` is None; recording them stores why they cannot run)."""
        return self._read(
            lambda cur: store_queries.pending_verification(
                cur, limit, include_invalid=include_invalid
            )
        )

    def record_execution_and_grade(
        self, proposal_id: str, run: RunResult, grade: Grade | None, reward: Reward
    ) -> None:
        """Store a run, its grade (None when nothing could be graded) and reward, in one transaction.
        Recording again (a re-run) replaces the previous run and grade."""
        self._write(
            lambda cur: _record_execution(cur, proposal_id, run, grade, reward),
            what="record the execution",
        )

    # --- decisions -------------------------------------------------------------------------------

    def record_decision(
        self,
        item_id: str,
        action: DecisionAction | str,
        reviewer: str,
        note: str = "",
        reason: str = "",
        *,
        at: datetime | None = None,
    ) -> int:
        """Append a decision event; returns its event id.

        `undo` cancels the item's most recent accept/reject/skip that is not cancelled yet (whoever
        made it), so repeated undos walk back through the history; with nothing left to undo it is a
        StoreError. `at` (naive UTC) is for imports of decisions made elsewhere; default now.
        """
        try:
            act = DecisionAction(action)
        except ValueError:
            allowed = ", ".join(a.value for a in DecisionAction)
            raise StoreError(f"unknown decision {action!r}: use one of {allowed}") from None
        who = reviewer.strip()
        if not who:
            raise StoreError("a decision needs the reviewer's name")
        for label, text in (("reviewer", who), ("note", note), ("reason", reason)):
            if len(text) > _MAX_TEXT:
                raise StoreError(
                    f"the {label} is too long ({len(text)} characters, at most {_MAX_TEXT})"
                )
        ts = at or utc_now()
        return self._write(
            lambda cur: _record_decision(cur, item_id, act, who, note, reason, ts),
            what="record the decision",
        )

    def item_history(self, proposal_id: str) -> tuple[DecisionEvent, ...]:
        """Every decision event on the item, oldest first, each marked `undone` if later cancelled."""
        return self._read(lambda cur: store_queries.item_history(cur, proposal_id))

    def current_decision(self, proposal_id: str) -> DecisionEvent | None:
        return self._read(lambda cur: store_queries.current_decision(cur, proposal_id))

    def check_caches(self) -> list[str]:
        """Proposal ids whose cached decision or grade disagrees with its source (empty when all
        agree; see store_schema)."""
        return self._read(store_queries.cache_mismatches)

    # --- review ----------------------------------------------------------------------------------

    def review_item(self, proposal_id: str) -> ReviewItem | None:
        return self._read(lambda cur: store_queries.review_item(cur, proposal_id))

    def review_queue(
        self, filters: QueueFilters | None = None, *, offset: int = 0, limit: int = 50
    ) -> QueuePage:
        """One page of the queue in arrival order, and how many items match in all."""
        return self._read(
            lambda cur: store_queries.review_queue(
                cur, filters or QueueFilters(), offset=offset, limit=limit
            )
        )

    def next_review_item(
        self, filters: QueueFilters | None = None, after_id: str | None = None
    ) -> QueueItem | None:
        """The first matching item after `after_id` in arrival order (from the start when None)."""
        return self._read(
            lambda cur: store_queries.next_review_item(cur, filters or QueueFilters(), after_id)
        )

    def queue_position(
        self, filters: QueueFilters | None, proposal_id: str
    ) -> tuple[int | None, int]:
        """(1-based position of the item in the filtered queue or None if it is not in it, total)."""
        return self._read(
            lambda cur: store_queries.queue_position(cur, filters or QueueFilters(), proposal_id)
        )

    # --- overview --------------------------------------------------------------------------------

    def counts(self) -> StoreCounts:
        return self._read(store_dashboard.counts)

    def dashboard_stats(self) -> DashboardStats:
        return self._read(store_dashboard.dashboard_stats)

    def fingerprint(self) -> dict[str, Any]:
        """What identifies the store's content cheaply (for export manifests)."""
        return self._read(lambda cur: store_queries.fingerprint(cur, self.path))

    def export_rows(
        self,
        filters: QueueFilters,
        *,
        kind: str,
        include_reference: bool = False,
        with_meta: bool = True,
    ) -> Iterator[ExportRow]:
        """Rows for `export` in its deterministic order, streamed in batches from one snapshot.
        `kind`: "accepted" or "pairs" (accepted and rejected, grouped by blueprint)."""
        cur = self._cursor()
        try:
            yield from store_queries.export_rows(
                cur, filters, kind=kind, include_reference=include_reference, with_meta=with_meta
            )
        except duckdb.Error as err:
            raise StoreError(f"could not read the store {self.path}: {err}") from err
        finally:
            cur.close()

    # --- JSONL imports ---------------------------------------------------------------------------

    def import_blueprints_jsonl(self, path: Path, *, skip_bad: bool = False) -> ImportReport:
        from codesearch_core.store_import import import_blueprints_jsonl

        return import_blueprints_jsonl(self, Path(path), skip_bad=skip_bad)

    def import_proposals_jsonl(self, path: Path, *, skip_bad: bool = False) -> ImportReport:
        from codesearch_core.store_import import import_proposals_jsonl

        return import_proposals_jsonl(self, Path(path), skip_bad=skip_bad)


# --- opening ---------------------------------------------------------------------------------------


def _connect(path: Path) -> duckdb.DuckDBPyConnection:
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


def _prepare(conn: duckdb.DuckDBPyConnection, path: Path) -> int:
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


def _rollback(cur: duckdb.DuckDBPyConnection) -> None:
    # A failed COMMIT has already ended the transaction; there is nothing left to roll back then.
    with suppress(duckdb.Error):
        cur.execute("ROLLBACK")


# --- writes (each runs inside the caller's transaction) --------------------------------------------


def _frame(columns: Sequence[str], rows: Sequence[list[Any] | tuple[Any, ...]]) -> pd.DataFrame:
    """A DataFrame DuckDB can scan: bulk inserts from one are ~300x faster than executemany."""
    frame = pd.DataFrame.from_records(list(rows), columns=list(columns))
    for name in ("prompt_tokens", "completion_tokens", "blueprint_seq"):
        if name in frame:
            frame[name] = pd.array(frame[name].tolist(), dtype="Int64")
    return frame


def _add_blueprints(
    cur: duckdb.DuckDBPyConnection,
    blueprints: Sequence[Blueprint],
    *,
    source: str,
    skip_bad: bool,
) -> ImportReport:
    ids = [bp.id for bp in blueprints]
    hashes = [bp.content_hash for bp in blueprints]
    by_id: dict[str, str] = {}
    by_hash: dict[str, str] = {}
    if blueprints:
        cur.register("incoming_keys", pd.DataFrame({"id": ids, "content_hash": hashes}))
        by_id = dict(
            cur.execute(
                "SELECT b.id, b.content_hash FROM blueprints b JOIN incoming_keys i ON i.id = b.id"
            ).fetchall()
        )
        by_hash = dict(
            cur.execute(
                "SELECT b.content_hash, b.id FROM blueprints b "
                "JOIN incoming_keys i ON i.content_hash = b.content_hash"
            ).fetchall()
        )
        cur.unregister("incoming_keys")
    new: list[Blueprint] = []
    out_ids: list[str] = []
    errors: list[BlueprintConflictError] = []
    existing = 0
    for bp, content_hash in zip(blueprints, hashes, strict=True):
        stored_hash = by_id.get(bp.id)
        if stored_hash is not None and stored_hash != content_hash:
            err = BlueprintConflictError(bp.id, source=source)
            if not skip_bad:
                raise err
            errors.append(err)
            continue
        if stored_hash is not None:
            existing += 1
            out_ids.append(bp.id)
        elif content_hash in by_hash:
            existing += 1
            out_ids.append(by_hash[content_hash])
        else:
            new.append(bp)
            by_id[bp.id] = content_hash
            by_hash[content_hash] = bp.id
            out_ids.append(bp.id)
    if new:
        now = utc_now()
        _insert_blueprints(cur, new, source=source, now=now)
        _insert_revisions(cur, [(bp, 1) for bp in new], source=source, now=now)
    return ImportReport(
        source=source, new=len(new), existing=existing, errors=tuple(errors), ids=tuple(out_ids)
    )


def _insert_blueprints(
    cur: duckdb.DuckDBPyConnection, blueprints: Sequence[Blueprint], *, source: str, now: datetime
) -> None:
    rows = []
    for bp in blueprints:
        row = list(blueprint_row(bp, source=source, now=now))
        row[BLUEPRINT_COLUMNS.index("tags")] = json.dumps(list(bp.tags))
        rows.append(row)
    cur.register("incoming_blueprints", _frame(BLUEPRINT_COLUMNS, rows))
    columns = ", ".join(BLUEPRINT_COLUMNS)
    select = ", ".join(
        "CAST(CAST(tags AS JSON) AS VARCHAR[])" if c == "tags" else c for c in BLUEPRINT_COLUMNS
    )
    cur.execute(f"INSERT INTO blueprints ({columns}) SELECT {select} FROM incoming_blueprints")
    cur.unregister("incoming_blueprints")


def _insert_revisions(
    cur: duckdb.DuckDBPyConnection,
    revisions: Sequence[tuple[Blueprint, int]],
    *,
    source: str,
    now: datetime,
) -> None:
    rows = [
        (bp.id, number, bp.content_hash, canonical_json(blueprint_to_dict(bp)), source, now)
        for bp, number in revisions
    ]
    cur.register(
        "incoming_revisions",
        _frame(("blueprint_id", "revision", "content_hash", "data", "source", "changed_at"), rows),
    )
    cur.execute("INSERT INTO blueprint_revisions SELECT * FROM incoming_revisions")
    cur.unregister("incoming_revisions")


def _upsert_blueprint(cur: duckdb.DuckDBPyConnection, bp: Blueprint, *, source: str) -> str:
    twin = first_row(
        cur.execute(
            "SELECT id FROM blueprints WHERE content_hash = ? AND id <> ?", [bp.content_hash, bp.id]
        )
    )
    if twin is not None:
        raise StoreError(
            f"blueprint {twin[0]!r} already has this intent, corpus and reference call; "
            "change one of them, or edit that blueprint instead"
        )
    row = first_row(
        cur.execute(
            "SELECT b.id, b.intent, b.reference_call, b.corpus, b.expected, b.language, b.tags, "
            "b.difficulty, b.notes FROM blueprints b WHERE b.id = ?",
            [bp.id],
        )
    )
    now = utc_now()
    if row is None:
        _insert_blueprints(cur, [bp], source=source, now=now)
        _insert_revisions(cur, [(bp, 1)], source=source, now=now)
        return "created"
    if blueprint_from_row(row) == bp:
        return "unchanged"
    values = blueprint_row(bp, source=source, now=now)
    updated = {
        c: v
        for c, v in zip(BLUEPRINT_COLUMNS, values, strict=True)
        if c not in ("id", "created_at")
    }
    assignments = ", ".join(f"{c} = ?" for c in updated)
    cur.execute(f"UPDATE blueprints SET {assignments} WHERE id = ?", [*updated.values(), bp.id])
    last = first_row(
        cur.execute(
            "SELECT coalesce(max(revision), 0) FROM blueprint_revisions WHERE blueprint_id = ?",
            [bp.id],
        )
    )
    _insert_revisions(cur, [(bp, int(last[0] if last else 0) + 1)], source=source, now=now)
    return "updated"


def _add_proposals(
    cur: duckdb.DuckDBPyConnection, proposals: Sequence[Proposal], *, source: str
) -> ImportReport:
    if not proposals:
        return ImportReport(source=source, new=0, existing=0)
    blueprint_ids = sorted({p.blueprint_id for p in proposals})
    cur.register("incoming_keys", pd.DataFrame({"id": blueprint_ids}))
    seq_of = dict(
        cur.execute(
            "SELECT b.id, b.seq FROM blueprints b JOIN incoming_keys i ON i.id = b.id"
        ).fetchall()
    )
    cur.unregister("incoming_keys")
    unknown = [b for b in blueprint_ids if b not in seq_of]
    if unknown:
        shown = ", ".join(repr(b) for b in unknown[:5])
        raise StoreError(
            f"proposals name {len(unknown)} unknown blueprint(s): {shown}; store the blueprints first"
        )
    ids = [proposal_id(p) for p in proposals]
    cur.register("incoming_keys", pd.DataFrame({"id": sorted(set(ids))}))
    stored = {
        r[0]
        for r in cur.execute(
            "SELECT p.id FROM proposals p JOIN incoming_keys i ON i.id = p.id"
        ).fetchall()
    }
    cur.unregister("incoming_keys")
    now = utc_now()
    rows = []
    seen = set(stored)
    for p, pid in zip(proposals, ids, strict=True):
        if pid not in seen:
            seen.add(pid)
            row = list(proposal_row(p, pid=pid, blueprint_seq=seq_of[p.blueprint_id], now=now))
            row[PROPOSAL_COLUMNS.index("repairs")] = json.dumps(list(p.repairs))
            rows.append(row)
    if rows:
        cur.register("incoming_proposals", _frame(PROPOSAL_COLUMNS, rows))
        columns = ", ".join(PROPOSAL_COLUMNS)
        select = ", ".join(
            "CAST(CAST(repairs AS JSON) AS VARCHAR[])" if c == "repairs" else c
            for c in PROPOSAL_COLUMNS
        )
        cur.execute(f"INSERT INTO proposals ({columns}) SELECT {select} FROM incoming_proposals")
        cur.unregister("incoming_proposals")
    sightings = pd.DataFrame(
        {
            "proposal_id": ids,
            "engine": [p.engine for p in proposals],
            "model": [p.model for p in proposals],
        }
    )
    cur.register("incoming_sightings", sightings)
    cur.execute(
        "INSERT INTO proposal_sightings SELECT proposal_id, engine, model, ? FROM incoming_sightings",
        [now],
    )
    cur.unregister("incoming_sightings")
    return ImportReport(
        source=source, new=len(rows), existing=len(proposals) - len(rows), ids=tuple(ids)
    )


def _proposal_seq(cur: duckdb.DuckDBPyConnection, proposal_id: str) -> int:
    row = first_row(cur.execute("SELECT seq FROM proposals WHERE id = ?", [proposal_id]))
    if row is None:
        raise StoreError(f"no proposal with id {proposal_id!r} in the store")
    return int(row[0])


def _record_execution(
    cur: duckdb.DuckDBPyConnection,
    proposal_id: str,
    run: RunResult,
    grade: Grade | None,
    reward: Reward,
) -> None:
    seq = _proposal_seq(cur, proposal_id)
    now = utc_now()
    cur.execute(
        "INSERT OR REPLACE INTO executions VALUES (?, ?, ?, ?::JSON, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            seq,
            proposal_id,
            run.ok,
            json.dumps([f.to_dict() for f in run.findings], ensure_ascii=False),
            len(run.findings),
            run.return_code,
            run.stderr,
            run.elapsed_s,
            run.truncated,
            None if run.error_kind is None else run.error_kind.value,
            run.error,
            now,
        ],
    )
    metrics: list[Any] = (
        [None] * 7
        if grade is None
        else [
            grade.file_iou,
            grade.span_precision,
            grade.span_recall,
            grade.span_f1,
            grade.n_predicted,
            grade.n_expected,
            grade.n_matched,
        ]
    )
    cur.execute(
        "INSERT OR REPLACE INTO grades VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::JSON, ?)",
        [seq, proposal_id, *metrics, reward.total, json.dumps(dict(reward.components)), now],
    )
    cur.execute(
        "UPDATE proposals SET span_f1 = ?, reward = ? WHERE seq = ? AND id = ?",
        [metrics[3], reward.total, seq, proposal_id],
    )


def _record_decision(
    cur: duckdb.DuckDBPyConnection,
    item_id: str,
    action: DecisionAction,
    reviewer: str,
    note: str,
    reason: str,
    ts: datetime,
) -> int:
    valid = first_row(cur.execute("SELECT valid FROM proposals WHERE id = ?", [item_id]))
    if valid is None:
        raise StoreError(f"no proposal with id {item_id!r} in the store")
    if action is DecisionAction.ACCEPT and not valid[0]:
        raise StoreError(
            f"proposal {item_id!r} has no valid tool call, so it cannot be accepted: reject it, "
            "or edit the call and accept the new proposal"
        )
    events = cur.execute(
        "SELECT event_id, action, undoes FROM decisions WHERE item_id = ? ORDER BY event_id",
        [item_id],
    ).fetchall()
    active = store_queries.active_events(events)
    undoes: int | None = None
    if action is DecisionAction.UNDO:
        if not active:
            raise StoreError(f"nothing to undo on item {item_id!r}: it has no decision left")
        undoes = active.pop()[0]
    row = first_row(
        cur.execute(
            "INSERT INTO decisions (item_id, action, undoes, reviewer, note, reason, ts) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING event_id",
            [item_id, action.value, undoes, reviewer, note, reason, ts],
        )
    )
    assert row is not None
    event_id = int(row[0])
    if action is not DecisionAction.UNDO:
        active.append((event_id, action.value))
    state_event, state = active[-1] if active else (None, None)
    # This write also makes two concurrent decisions on one item conflict, so one of them retries.
    cur.execute(
        "UPDATE proposals SET decision = ?, decision_event_id = ? WHERE id = ?",
        [state, state_event, item_id],
    )
    return event_id
