"""Sub-commands of `db` about people: `audit` (who changed what, when), `users`, and `role`.

The command line acts as the person running it (their login name, mode `cli`): whoever can open
the store file can change it anyway, so it is trusted like an admin, and what it changes is audited
under that name.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tomllib
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from codesearch_core.access import Mode, Role, load_settings
from codesearch_core.cli.store_access import open_store
from codesearch_core.errors import CodesearchError

EXIT_OK = 0


def register_db(
    db_sub: argparse._SubParsersAction[Any], db_option: Callable[[argparse.ArgumentParser], None]
) -> None:
    audit = db_sub.add_parser(
        "audit",
        help="who changed what, when (newest first)",
        description="Print the audit trail: every decision, blueprint change, import, export and "
        "role change, with who made it, when (UTC) and how they were identified.",
    )
    db_option(audit)
    audit.add_argument(
        "--since",
        type=_since,
        metavar="WHEN",
        help="only changes since then: a date (2026-11-01), a time (2026-11-01T09:30), or an "
        "age such as 2h, 3d",
    )
    audit.add_argument("--actor", default="", help="only changes by this person")
    audit.add_argument(
        "--action", default="", help="only this action (decision.accept) or family (decision)"
    )
    audit.add_argument("--limit", type=int, default=1000, help="at most this many (default 1000)")
    audit.add_argument("--json", action="store_true", help="one JSON object per line")
    audit.set_defaults(func=cmd_db_audit)

    users = db_sub.add_parser("users", help="the people in the studio and their roles")
    db_option(users)
    users.set_defaults(func=cmd_db_users)

    role = db_sub.add_parser(
        "role",
        help="give someone a role",
        description="Give a person a role (annotator, lead, admin; disabled removes their "
        "access). The way to make the first admin of a store, besides CODESEARCH_ADMINS.",
    )
    db_option(role)
    role.add_argument("name", help="their name as they log in (e.g. their email)")
    role.add_argument("role", choices=[str(r) for r in Role])
    role.set_defaults(func=cmd_db_role)


def _since(text: str) -> datetime:
    """A naive-UTC time from a date, an ISO time, or an age like 90m / 2h / 3d."""
    raw = text.strip()
    units = {"m": "minutes", "h": "hours", "d": "days"}
    if raw[-1:] in units and raw[:-1].isdigit():
        return datetime.now(UTC).replace(tzinfo=None) - timedelta(**{units[raw[-1]]: int(raw[:-1])})
    try:
        if len(raw) == 10:
            return datetime.combine(date.fromisoformat(raw), datetime.min.time())
        when = datetime.fromisoformat(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date (2026-11-01), a time (2026-11-01T09:30) or an age (2h, 3d)"
        ) from None
    return when.astimezone(UTC).replace(tzinfo=None) if when.tzinfo else when


def cmd_db_audit(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise CodesearchError("--limit must be at least 1")
    path = getattr(args, "db", None)
    from codesearch_core.store import AuditFilters

    with open_store(path) as store:
        entries = store.audit_log(
            AuditFilters(since=args.since, actor=args.actor, action=args.action), limit=args.limit
        )
    for e in entries:
        if args.json:
            row = {
                "id": e.id,
                "at": e.at.isoformat() + "Z",
                "actor": e.actor,
                "role": e.role,
                "mode": e.mode,
                "action": e.action,
                "target": e.target,
                "detail": e.detail,
            }
            print(json.dumps(row, ensure_ascii=False, sort_keys=True))
        else:
            detail = json.dumps(e.detail, ensure_ascii=False, sort_keys=True)
            print(
                f"{e.at:%Y-%m-%d %H:%M:%S}  {e.actor} ({e.role}, {e.mode})  {e.action}"
                f"  {e.target}  {detail}"
            )
    return EXIT_OK


def cmd_db_users(args: argparse.Namespace) -> int:
    with open_store(getattr(args, "db", None)) as store:
        people = store.users()
    if not people:
        print("nobody has logged in yet (local mode needs no one)")
    for u in people:
        print(f"{u.name}\t{u.role}\tadded by {u.added_by} {u.added_at:%Y-%m-%d}")
    return EXIT_OK


#: Where Streamlit reads the studio's secrets from (the project's folder, then the user's).
_SECRETS: Final = (Path(".streamlit/secrets.toml"), Path.home() / ".streamlit/secrets.toml")


def _studio_mode() -> Mode | None:
    """How the studio started from here identifies people (the environment over the secrets
    file, as the studio reads them); None when the settings cannot be read."""
    table: dict[str, object] = {}
    for path in _SECRETS:
        try:
            table = {**tomllib.loads(path.read_text(encoding="utf-8")).get("codesearch", {}),
                     **table}  # fmt: skip
        except (OSError, tomllib.TOMLDecodeError, AttributeError):
            continue
    try:
        return load_settings(os.environ, table).mode
    except CodesearchError:
        return None


def cmd_db_role(args: argparse.Namespace) -> int:
    with open_store(getattr(args, "db", None)) as store:
        old = store.set_role(args.name, args.role)
    print(f"{args.name.strip()}: {old or 'new'} -> {args.role}")
    if (mode := _studio_mode()) is not None and (note := mode.roles_note) is not None:
        # Stored, and shown by `db users`; but without a login whoever opens the studio acts as
        # an admin, so the role changes nothing until it has one.
        print(f"note: {note}", file=sys.stderr)
    return EXIT_OK
