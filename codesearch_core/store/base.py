"""The store's handle: one DuckDB connection, transactions, and who acts through it.

`StoreBase` gives every call its own cursor, so many Streamlit sessions and threads can use one
handle at once. Every write is one transaction: it commits whole or leaves nothing, and a
transaction that loses a write-write conflict to another thread is retried on the new state. A
guarded write (`_act`) also checks the acting person's role inside its transaction and appends its
audit rows there (`store.audit`). `Store` (`store.core`) adds the content.
"""

from __future__ import annotations

import copy
import random
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any, Final, TypeVar

import duckdb

from codesearch_core import config
from codesearch_core.access import AccessSettings, Action, Actor, Role, check_name, require
from codesearch_core.errors import StoreError
from codesearch_core.store import audit as store_audit
from codesearch_core.store.audit import Deed
from codesearch_core.store.check import is_damage
from codesearch_core.store.connect import IDLE_RELEASE_S, IdleReleasingConnection
from codesearch_core.store.rows import utc_now
from codesearch_core.store.types import AuditEntry, AuditFilters, UserRow

S = TypeVar("S", bound="StoreBase")
T = TypeVar("T")

_MAX_CONFLICT_RETRIES: Final = 60
#: A constraint error can be a race (another thread stored the same key since our check); re-checking
#: on a fresh snapshot settles it, so a few retries suffice.
_MAX_CONSTRAINT_RETRIES: Final = 5


@dataclass(frozen=True, slots=True)
class _Attempt:
    retryable: bool
    error: duckdb.Error


@dataclass(slots=True)
class _Shared:
    """What the handles made by `acting_as` share besides the connection."""

    lock: threading.Lock
    retries: int = 0


class StoreBase:
    """A handle on one store file: its connection, transactions, and who is acting through it.
    Thread-safe; close it (or use `with`) when done. `Store` adds the content."""

    def __init__(
        self,
        path: str | PathLike[str] | None = None,
        *,
        idle_release_s: float | None = IDLE_RELEASE_S,
        lock_wait_s: float | None = None,
        on_wait: Callable[[str], None] | None = None,
    ) -> None:
        """`idle_release_s`: let go of the file after this long without a call (None: hold it
        until `close`), so other processes can open it meanwhile; the next call opens it again.
        `lock_wait_s`: how long to wait for a file another process holds (default:
        CODESEARCH_LOCK_WAIT, 15 s); `on_wait` hears once when that waiting starts."""
        self.path = Path(path) if path is not None else config.db_path()
        self._handle = IdleReleasingConnection(
            self.path,
            idle_release_s=idle_release_s,
            lock_wait_s=config.lock_wait_s() if lock_wait_s is None else lock_wait_s,
            on_wait=on_wait,
        )
        self._shared = _Shared(threading.Lock())
        self.schema_version = self._handle.schema_version
        #: The schema version the file had when this handle opened it (0: created now).
        self.found_version = self._handle.found_version
        #: Who the writes through this handle are made by (see `acting_as`).
        self.actor = Actor.command_line()
        self._after_open()

    def _after_open(self) -> None:
        """Upkeep a subclass does once the file is open and migrated (nothing here)."""

    @property
    def retries(self) -> int:
        """Transactions re-run after losing a write conflict to another thread (for monitoring)."""
        return self._shared.retries

    def acting_as(self: S, actor: Actor) -> S:
        """This store, with every write through the returned handle checked against `actor`'s role
        and audited as theirs. The handles share one connection; close only the original."""
        view = copy.copy(self)
        view.actor = actor
        return view

    def close(self) -> None:
        self._handle.close()

    def __enter__(self: S) -> S:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- plumbing --------------------------------------------------------------------------------

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        return self._handle.cursor()

    def _release(self, cur: duckdb.DuckDBPyConnection) -> None:
        self._handle.release(cur)

    def _read(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        cur = self._cursor()
        try:
            return fn(cur)
        except (duckdb.Error, RuntimeError) as err:
            raise_if_interrupted(err)
            if not isinstance(err, duckdb.Error):
                raise
            if is_damage(err):
                raise StoreError(damaged_message(self.path, err)) from err
            raise StoreError(f"could not read the store {self.path}: {err}") from err
        finally:
            self._release(cur)

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
            if is_damage(attempt.error):
                raise StoreError(damaged_message(self.path, attempt.error)) from attempt.error
            if not attempt.retryable or give_up:
                raise StoreError(
                    f"could not {what} in {self.path}: {attempt.error}. Nothing was written."
                ) from attempt.error
            with self._shared.lock:
                self._shared.retries += 1
            time.sleep(random.uniform(0, delay))
            delay = min(delay * 2, 0.05)

    def _attempt(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T | _Attempt:
        cur = self._cursor()
        try:
            try:
                cur.execute("BEGIN TRANSACTION")
                result = fn(cur)
                cur.execute("COMMIT")
            except duckdb.Error as err:
                _rollback(cur)
                raise_if_interrupted(err)
                retryable = isinstance(
                    err, duckdb.TransactionException | duckdb.ConstraintException
                )
                return _Attempt(retryable, err)
            except BaseException as err:
                _rollback(cur)
                raise_if_interrupted(err)
                raise
            return result
        except OSError as err:
            raise StoreError(f"could not write to {self.path}: {err}") from err
        finally:
            self._release(cur)

    # --- who may do what -------------------------------------------------------------------------

    def _act(self, fn: Callable[[Deed], T], *, action: Action, what: str) -> T:
        """Run `fn` as one transaction by `self.actor`: refused (AccessDenied) unless their role,
        read inside the transaction, allows `action`; the audit rows `fn` logs commit with it."""
        actor = self.actor

        def transaction(cur: duckdb.DuckDBPyConnection) -> T:
            deed = Deed(cur, actor, store_audit.role_in(cur, actor), utc_now())
            deed.require(action)
            result = fn(deed)
            deed.flush()
            return result

        return self._write(transaction, what=what)

    def role(self) -> Role | None:
        """The acting person's role now (admin in local and command-line use; None: no member)."""
        return self._read(lambda cur: store_audit.role_in(cur, self.actor))

    def require(self, action: Action) -> None:
        """AccessDenied unless the acting person may take `action` now."""
        require(self.actor.name, self.role(), action)

    def record_audit(self, action: Action, event: str, target: str = "", **detail: Any) -> None:
        """Check `action` and record `event` for something done outside the store (an export
        file written, a corpus added)."""

        def log(deed: Deed) -> None:
            deed.log(event, target, **detail)

        self._act(log, action=action, what="record it in the audit trail")

    def sign_in(self, settings: AccessSettings) -> Role:
        """The acting person's role as they arrive, adding them with their first role if new
        (AccessDenied if the settings admit only known people)."""
        actor = self.actor
        if actor.mode.trusted:
            return Role.ADMIN
        role = self.role()
        if role is not None and (role is Role.ADMIN or actor.name not in settings.admins):
            return role  # the usual case, a read; the write below happens once per person
        return self._write(
            lambda cur: store_audit.sign_in(cur, actor, settings, at=utc_now()),
            what="add you to the studio",
        )

    def set_role(self, name: str, role: Role | str) -> Role | None:
        """Give `name` a role (admins only); returns the previous one (None: they were new)."""
        who = check_name(name)
        try:
            new = Role(role)
        except ValueError:
            raise StoreError(f"unknown role {role!r}: use one of {', '.join(Role)}") from None
        return self._act(
            lambda deed: store_audit.set_role(deed, who, new),
            action=Action.MANAGE_USERS,
            what="change the role",
        )

    def users(self) -> list[UserRow]:
        return self._read(store_audit.users)

    def audit_log(
        self, filters: AuditFilters | None = None, *, limit: int = 500
    ) -> list[AuditEntry]:
        """The audit trail, newest first (leads and admins)."""
        self.require(Action.VIEW_AUDIT)
        return self._read(
            lambda cur: store_audit.audit_log(cur, filters or AuditFilters(), limit=limit)
        )

    def audit_actions(self) -> list[str]:
        """Every action name the audit trail holds (for filters)."""
        return self._read(store_audit.audit_actions)


def damaged_message(path: Path, err: BaseException) -> str:
    """What a user reads when DuckDB meets a damaged block in the middle of work."""
    detail = str(err).splitlines()[0]
    return (
        f"the store {path} is damaged ({detail}). Nothing was changed. Restore the file from a "
        "backup; or save what can still be read (`codesearch export` writes the accepted "
        "items), move the file away and start a new store (`codesearch db init --seeds`). "
        "`codesearch db check` lists which tables are readable."
    )


def _rollback(cur: duckdb.DuckDBPyConnection) -> None:
    # A failed COMMIT has already ended the transaction; there is nothing left to roll back then.
    with suppress(duckdb.Error):
        cur.execute("ROLLBACK")


def raise_if_interrupted(err: BaseException) -> None:
    """Ctrl-C during a statement reaches Python as a plain RuntimeError("Query interrupted") (or an
    InterruptException after `interrupt()`): make it the KeyboardInterrupt it was, so callers stop
    the way they do for any Ctrl-C instead of reporting a store failure."""
    interrupted = isinstance(err, duckdb.InterruptException) or (
        type(err) is RuntimeError and "query interrupted" in str(err).lower()
    )
    if interrupted:
        raise KeyboardInterrupt(str(err)) from err
