"""People, their roles, and the audit trail, at the level of a cursor inside a transaction.

Every guarded write (`Store._act`) reads the actor's role here, checks it against the action, and
appends its audit rows in the same transaction: a role changed a moment ago applies to the next
write, and a change and its audit row commit together or not at all.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb

from codesearch_core.access import AccessDenied, AccessSettings, Action, Actor, Role, require
from codesearch_core.store.types import AuditEntry, AuditFilters, UserRow

Cursor = duckdb.DuckDBPyConnection


def role_in(cur: Cursor, actor: Actor) -> Role | None:
    """The actor's role now: admin for the trusted modes, else the `users` row (None: no row)."""
    if actor.mode.trusted:
        return Role.ADMIN
    row = cur.execute("SELECT role FROM users WHERE name = ?", [actor.name]).fetchone()
    return None if row is None else Role(str(row[0]))


@dataclass(slots=True)
class Deed:
    """One guarded write in progress: who, with which role, and the audit rows it appends."""

    cur: Cursor
    actor: Actor
    role: Role | None
    at: datetime
    rows: list[tuple[Any, ...]] = field(default_factory=list)

    def require(self, action: Action) -> None:
        require(self.actor.name, self.role, action)

    def require_self(self, reviewer: str, action: Action) -> None:
        """`action` on `reviewer`'s behalf: someone logged in acts only as themselves."""
        self.require(action)
        if not self.actor.mode.trusted and reviewer != self.actor.name:
            raise AccessDenied(
                f"Not allowed: {self.actor.name} is logged in and can act only as themselves, "
                f"not as {reviewer!r}."
            )

    def log(self, action: str, target: str = "", **detail: Any) -> None:
        """Append one audit row (written when the transaction ends, with all the others)."""
        role = str(self.role) if self.role is not None else "none"
        self.rows.append(
            (
                self.at,
                self.actor.name,
                role,
                str(self.actor.mode),
                action,
                target,
                json.dumps(detail, default=str, sort_keys=True),
            )
        )

    def flush(self) -> None:
        if self.rows:
            self.cur.executemany(
                "INSERT INTO audit (ts, actor, role, mode, action, target, detail) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                self.rows,
            )
            self.rows.clear()


def sign_in(cur: Cursor, actor: Actor, settings: AccessSettings, *, at: datetime) -> Role:
    """The role of someone arriving (adding them with their first role when new), or
    AccessDenied when they are refused. Admins named in the settings are always admins."""
    if actor.mode.trusted:
        return Role.ADMIN
    current = role_in(cur, actor)
    if current is None:
        first = settings.first_role(actor.name)
        if first is None:
            raise AccessDenied(
                f"Not allowed: {actor.name} is not a member of this studio, and it admits only "
                "people an admin has added. Ask an admin to add you."
            )
        cur.execute(
            "INSERT INTO users VALUES (?, ?, 'sign-in', ?, ?)", [actor.name, str(first), at, at]
        )
        deed = Deed(cur, actor, first, at)
        deed.log("user.join", actor.name, role=str(first))
        deed.flush()
        return first
    if actor.name in settings.admins and current is not Role.ADMIN:
        cur.execute(
            "UPDATE users SET role = 'admin', updated_at = ? WHERE name = ?", [at, actor.name]
        )
        deed = Deed(cur, actor, Role.ADMIN, at)
        deed.log("role.change", actor.name, old=str(current), new="admin", why="admins setting")
        deed.flush()
        return Role.ADMIN
    return current


def set_role(deed: Deed, name: str, role: Role) -> Role | None:
    """Give `name` `role` (adding them if new); the previous role. The last admin stays one."""
    deed.require(Action.MANAGE_USERS)
    cur = deed.cur
    row = cur.execute("SELECT role FROM users WHERE name = ?", [name]).fetchone()
    old = None if row is None else Role(str(row[0]))
    if old is role:
        return old
    if old is Role.ADMIN:
        (admins,) = cur.execute("SELECT count(*) FROM users WHERE role = 'admin'").fetchone() or (
            0,
        )
        if admins <= 1:
            raise AccessDenied(
                f"Not allowed: {name} is the last admin; make someone else an admin first."
            )
    if row is None:
        cur.execute(
            "INSERT INTO users VALUES (?, ?, ?, ?, ?)",
            [name, str(role), deed.actor.name, deed.at, deed.at],
        )
    else:
        cur.execute(
            "UPDATE users SET role = ?, updated_at = ? WHERE name = ?", [str(role), deed.at, name]
        )
    deed.log("role.change", name, old=str(old) if old else None, new=str(role))
    return old


def users(cur: Cursor) -> list[UserRow]:
    rows = cur.execute(
        "SELECT name, role, added_by, added_at, updated_at FROM users ORDER BY name"
    ).fetchall()
    return [UserRow(str(n), Role(str(r)), str(b), a, u) for n, r, b, a, u in rows]


def audit_log(cur: Cursor, filters: AuditFilters, *, limit: int) -> list[AuditEntry]:
    """Matching audit rows, newest first."""
    where, params = _audit_where(filters)
    rows = cur.execute(
        "SELECT id, ts, actor, role, mode, action, target, detail FROM audit"
        f"{where} ORDER BY id DESC LIMIT ?",
        [*params, limit],
    ).fetchall()
    return [
        AuditEntry(
            int(i), at, str(actor), str(role), str(mode), str(action), str(target), json.loads(d)
        )
        for i, at, actor, role, mode, action, target, d in rows
    ]


def audit_actions(cur: Cursor) -> list[str]:
    return [
        str(r[0]) for r in cur.execute("SELECT DISTINCT action FROM audit ORDER BY 1").fetchall()
    ]


def _audit_where(filters: AuditFilters) -> tuple[str, Sequence[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if filters.since is not None:
        clauses.append("ts >= ?")
        params.append(filters.since)
    if filters.actor:
        clauses.append("actor = ?")
        params.append(filters.actor)
    if filters.action:
        # "decision" matches decision.accept, decision.reject, ...: the families read as one.
        clauses.append("(action = ? OR starts_with(action, ? || '.'))")
        params += [filters.action, filters.action]
    if filters.target:
        clauses.append("target = ?")
        params.append(filters.target)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params
