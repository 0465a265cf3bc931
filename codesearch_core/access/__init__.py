"""Who may do what: identities, roles and the permission check every mutation goes through.

This layer holds no state and imports nothing above `config`: the store keeps the users and the
audit trail and calls `require` inside each write's transaction, so a role removed a moment ago
refuses the very next action, whichever page or command sent it. How the studio learns who is
there (a typed name, an OpenID Connect login, a proxy header) is `access.settings`.
"""

from codesearch_core.access.roles import (
    ACTION_LABELS,
    AccessDenied,
    Action,
    Actor,
    Mode,
    Role,
    allowed,
    check_name,
    denial,
    require,
)
from codesearch_core.access.settings import AccessSettings, load_settings

__all__ = [
    "ACTION_LABELS",
    "AccessDenied",
    "AccessSettings",
    "Action",
    "Actor",
    "Mode",
    "Role",
    "allowed",
    "check_name",
    "denial",
    "load_settings",
    "require",
]
