"""The access settings: how people are identified and who gets which role at first.

Read from the environment (`CODESEARCH_AUTH`, …) or from the `[codesearch]` table of Streamlit's
`.streamlit/secrets.toml`; the environment wins, so a deployment can override a shared file. The
OpenID Connect provider itself is configured in the secrets' `[auth]` table, as `st.login` reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from codesearch_core.access.roles import Mode, Role, check_name
from codesearch_core.errors import CodesearchError

#: Uploads larger than this are refused before they are parsed (CODESEARCH_MAX_UPLOAD_MB).
DEFAULT_MAX_UPLOAD_MB: Final = 50


@dataclass(frozen=True, slots=True)
class AccessSettings:
    mode: Mode = Mode.LOCAL
    #: Proxy mode: the request header that names the user (e.g. X-Forwarded-Email).
    proxy_header: str = ""
    #: OIDC mode: the `[auth.NAME]` provider to log in with ("" : the `[auth]` table itself) and
    #: the claim that names the user.
    oidc_provider: str = ""
    oidc_claim: str = "email"
    #: People who are always admins (the first admin comes from here), and people who start as
    #: leads; everyone else starts as `unknown_role`, or is refused when it is None.
    admins: frozenset[str] = frozenset()
    leads: frozenset[str] = frozenset()
    unknown_role: Role | None = Role.ANNOTATOR
    max_upload_mb: int = DEFAULT_MAX_UPLOAD_MB

    def first_role(self, name: str) -> Role | None:
        """The role a person gets when first seen (None: they are refused)."""
        if name in self.admins:
            return Role.ADMIN
        if name in self.leads:
            return Role.LEAD
        return self.unknown_role

    def describe(self) -> str:
        """The mode in words, for the sidebar."""
        if self.mode is Mode.OIDC:
            return "OpenID Connect login" + (
                f" ({self.oidc_provider})" if self.oidc_provider else ""
            )
        if self.mode is Mode.PROXY:
            return f"login proxy (header {self.proxy_header})"
        return "local, no login"


def load_settings(
    env: Mapping[str, str], secrets: Mapping[str, Any] | None = None
) -> AccessSettings:
    """Settings from `env` (CODESEARCH_* variables) over `secrets` (the `[codesearch]` table);
    CodesearchError naming the setting when one is wrong."""
    table = dict(secrets or {})

    def get(env_name: str, key: str, default: Any) -> Any:
        if (raw := env.get(env_name, "").strip()) != "":
            return raw
        return table.get(key, default)

    raw_mode = str(get("CODESEARCH_AUTH", "auth", "local")).strip().lower()
    try:
        mode = Mode(raw_mode)
    except ValueError:
        mode = None
    if mode is None or mode is Mode.CLI:
        raise CodesearchError(f"CODESEARCH_AUTH / auth = {raw_mode!r}: use local, oidc or proxy")
    header = str(get("CODESEARCH_PROXY_HEADER", "proxy_header", "")).strip()
    if mode is Mode.PROXY and not header:
        raise CodesearchError(
            "proxy mode needs the header that names the user: set CODESEARCH_PROXY_HEADER "
            "(or proxy_header in [codesearch]), e.g. X-Forwarded-Email"
        )
    raw_unknown = str(get("CODESEARCH_UNKNOWN_USERS", "unknown_users", "annotator")).strip()
    if raw_unknown not in ("annotator", "refuse"):
        raise CodesearchError(
            f"CODESEARCH_UNKNOWN_USERS / unknown_users = {raw_unknown!r}: use annotator or refuse"
        )
    raw_mb = get("CODESEARCH_MAX_UPLOAD_MB", "max_upload_mb", DEFAULT_MAX_UPLOAD_MB)
    try:
        max_mb = int(raw_mb)
    except (TypeError, ValueError):
        max_mb = -1
    if not 1 <= max_mb <= 4096:
        raise CodesearchError(
            f"CODESEARCH_MAX_UPLOAD_MB / max_upload_mb = {raw_mb!r}: a whole number of MB, 1-4096"
        )
    return AccessSettings(
        mode=mode,
        proxy_header=header,
        oidc_provider=str(get("CODESEARCH_OIDC_PROVIDER", "oidc_provider", "")).strip(),
        oidc_claim=str(get("CODESEARCH_OIDC_CLAIM", "oidc_claim", "email")).strip() or "email",
        admins=_names(get("CODESEARCH_ADMINS", "admins", ()), "admins"),
        leads=_names(get("CODESEARCH_LEADS", "leads", ()), "leads"),
        unknown_role=Role.ANNOTATOR if raw_unknown == "annotator" else None,
        max_upload_mb=max_mb,
    )


def _names(raw: Any, what: str) -> frozenset[str]:
    """A list of names from a comma-separated string (environment) or a TOML list."""
    items = raw.split(",") if isinstance(raw, str) else list(raw)
    try:
        return frozenset(check_name(str(item)) for item in items if str(item).strip())
    except CodesearchError as err:
        raise CodesearchError(f"{what}: {err}") from None
