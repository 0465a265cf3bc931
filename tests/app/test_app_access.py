"""Access in the app without a browser (AppTest): local mode's Team & audit page, and the pages a
studio shows when its access settings are wrong or a request carries no identity."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_support import (
    APP,
    TIMEOUT_S,
    open_app,
    stored,
    texts,
)
from streamlit.testing.v1 import AppTest

from codesearch_core.access import Role
from codesearch_core.store import AuditFilters


def test_local_mode_is_one_admin_who_can_add_people_before_logins_are_switched_on(
    studio_db: Path,
) -> None:
    at = open_app("pages/audit.py", reviewer="ann")
    assert "Access · local, no login" in " ".join(texts(at, "caption")).replace("**", "")
    # Where roles are set, the page says they take effect only with a login (issue 39).
    assert any("everyone acts as an admin" in t for t in texts(at, "info"))
    at.text_input(key="team:name").input("lee@example.com")
    at.selectbox(key="team:role_value").select("lead")
    at.button[[b.label for b in at.button].index("Set role")].click().run()
    assert not at.exception
    assert any("lee@example.com: new → lead" in t for t in texts(at, "success"))
    with stored(studio_db) as store:
        assert [(u.name, u.role) for u in store.users()] == [("lee@example.com", Role.LEAD)]
        (entry,) = store.audit_log(AuditFilters(action="role.change"))
        assert (entry.actor, entry.mode, entry.target) == ("ann", "local", "lee@example.com")


@pytest.mark.parametrize(
    ("env", "secrets", "title", "message"),
    [
        ({"CODESEARCH_AUTH": "ldap"}, {}, "access settings are wrong", "use local, oidc or proxy"),
        (
            {"CODESEARCH_AUTH": "proxy", "CODESEARCH_PROXY_HEADER": "X-Forwarded-Email"},
            {},
            "did not come through the login proxy",
            "X-Forwarded-Email header",
        ),
        ({}, {"codesearch": {"auth": "oidc"}}, "Login is not set up", "no [auth] table"),
    ],
)
def test_no_page_of_the_studio_opens_without_a_valid_identity(
    studio_db: Path,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    secrets: dict[str, object],
    title: str,
    message: str,
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S)
    for key, value in secrets.items():
        at.secrets[key] = value
    at.query_params["reviewer"] = "lee"  # a forged name opens nothing
    at.run()
    assert not at.exception
    assert title in at.title[0].value
    assert any(message in t for t in texts(at, "error"))
    assert not at.button and not at.text_input  # no page's widgets, no name field
