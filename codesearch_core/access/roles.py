"""Roles, the actions each may take, and the actor every store write is made by.

Three roles, each allowed what the one below it is plus more: an `annotator` reviews, proposes and
authors new blueprints; a `lead` also settles conflicts, edits blueprints, exports and manages
corpora; an `admin` also changes the review settings and people's roles. `disabled` keeps a
person's history attributed while refusing everything they try.
"""

from __future__ import annotations

import getpass
import unicodedata
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from codesearch_core.errors import CodesearchError

MAX_NAME_LENGTH: Final = 80


class AccessDenied(CodesearchError):
    """The actor's role does not allow the action (or the actor is not a member)."""


class Mode(StrEnum):
    """How the actor was identified."""

    LOCAL = "local"  # one person on their machine: a typed name, no login
    OIDC = "oidc"  # logged in with an OpenID Connect provider (st.login)
    PROXY = "proxy"  # a trusted proxy's header names the user
    CLI = "cli"  # a command run by whoever can open the store file

    @property
    def trusted(self) -> bool:
        """Whoever uses a local studio or the command line can open the store file itself, so
        roles would guard nothing: they act as admins (and every write is still audited)."""
        return self in (Mode.LOCAL, Mode.CLI)

    @property
    def roles_note(self) -> str | None:
        """What a role set in this mode does, said where roles are set (`db role`, the Team
        page; issue 39: both accepted a role in local mode without a word), or None when roles
        are enforced."""
        if not self.trusted:
            return None
        return (
            f"The studio here runs in {self} mode (no login), where everyone acts as an admin: "
            "a role is stored and takes effect once the studio runs with a login "
            "(CODESEARCH_AUTH=oidc or proxy; docs/teams.md)."
        )


class Role(StrEnum):
    ANNOTATOR = "annotator"
    LEAD = "lead"
    ADMIN = "admin"
    DISABLED = "disabled"


class Action(StrEnum):
    REVIEW = "review"
    PROPOSE = "propose"
    AUTHOR = "author"
    RESOLVE = "resolve"
    EDIT_BLUEPRINTS = "edit_blueprints"
    EXPORT = "export"
    MANAGE_CORPORA = "manage_corpora"
    VIEW_AUDIT = "view_audit"
    SETTINGS = "settings"
    MANAGE_USERS = "manage_users"
    EDIT_GUIDELINES = "edit_guidelines"


#: How an action reads in a refusal: "… needs the lead role to {label}".
ACTION_LABELS: Final[dict[Action, str]] = {
    Action.REVIEW: "review items",
    Action.PROPOSE: "propose or verify calls",
    Action.AUTHOR: "author new blueprints",
    Action.RESOLVE: "make final decisions on conflicts",
    Action.EDIT_BLUEPRINTS: "edit or import blueprints",
    Action.EXPORT: "export training data",
    Action.MANAGE_CORPORA: "manage corpora",
    Action.VIEW_AUDIT: "read the audit trail",
    Action.SETTINGS: "change the review settings",
    Action.MANAGE_USERS: "change people's roles",
    Action.EDIT_GUIDELINES: "edit the annotation guidelines",
}

_ANNOTATOR: Final = frozenset({Action.REVIEW, Action.PROPOSE, Action.AUTHOR})
_LEAD: Final = _ANNOTATOR | {
    Action.RESOLVE,
    Action.EDIT_BLUEPRINTS,
    Action.EXPORT,
    Action.MANAGE_CORPORA,
    Action.VIEW_AUDIT,
    Action.EDIT_GUIDELINES,
}
_ALLOWED: Final[dict[Role, frozenset[Action]]] = {
    Role.ANNOTATOR: _ANNOTATOR,
    Role.LEAD: _LEAD,
    Role.ADMIN: _LEAD | {Action.SETTINGS, Action.MANAGE_USERS},
    Role.DISABLED: frozenset(),
}


def allowed(role: Role | None, action: Action) -> bool:
    return role is not None and action in _ALLOWED[role]


def _least_role_for(action: Action) -> Role:
    return next(r for r in (Role.ANNOTATOR, Role.LEAD, Role.ADMIN) if action in _ALLOWED[r])


def denial(name: str, role: Role | None, action: Action) -> str | None:
    """Why `name` with `role` may not take `action` (a sentence for the UI), or None if they may."""
    if allowed(role, action):
        return None
    what = ACTION_LABELS[action]
    if role is None:
        return f"{name} is not a member of this studio: an admin can add them"
    if role is Role.DISABLED:
        return f"{name}'s access was removed by an admin: they cannot {what}"
    need = _least_role_for(action)
    return f"it needs the {need} role to {what} ({name} is {role})"


def require(name: str, role: Role | None, action: Action) -> None:
    """Raise AccessDenied unless `role` allows `action`."""
    if (why := denial(name, role, action)) is not None:
        raise AccessDenied(f"Not allowed: {why}.")


def check_name(name: str) -> str:
    """A person's name, trimmed; CodesearchError for an empty, overlong or control-laden one."""
    name = name.strip()
    if not name:
        raise CodesearchError("a name is needed")
    if len(name) > MAX_NAME_LENGTH:
        raise CodesearchError(
            f"a name has at most {MAX_NAME_LENGTH} characters (this one has {len(name)})"
        )
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in name):
        raise CodesearchError("a name cannot hold control characters or line breaks")
    return name


@dataclass(frozen=True, slots=True)
class Actor:
    """Who makes a change, and how they were identified. The role is not here: the store reads it
    at the moment of each write, so a change of role applies at once."""

    name: str
    mode: Mode

    @classmethod
    def command_line(cls) -> Actor:
        """The person running a `codesearch` command (their login name on this machine)."""
        try:
            name = getpass.getuser()
        except (KeyError, OSError):  # no passwd entry (some containers)
            name = "command line"
        return cls(name or "command line", Mode.CLI)
