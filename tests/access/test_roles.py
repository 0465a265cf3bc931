"""Roles and settings: what each role may do, how refusals read, and how the settings are read."""

from __future__ import annotations

import pytest

from codesearch_core.access import (
    AccessDenied,
    Action,
    Actor,
    Mode,
    Role,
    allowed,
    denial,
    load_settings,
    require,
)
from codesearch_core.errors import CodesearchError


def test_each_role_may_do_what_the_one_below_may_and_more() -> None:
    for action in Action:
        if allowed(Role.ANNOTATOR, action):
            assert allowed(Role.LEAD, action), action
        if allowed(Role.LEAD, action):
            assert allowed(Role.ADMIN, action), action
        assert not allowed(Role.DISABLED, action)
        assert not allowed(None, action)
    assert allowed(Role.ANNOTATOR, Action.REVIEW)
    assert not allowed(Role.ANNOTATOR, Action.EXPORT)
    assert not allowed(Role.ANNOTATOR, Action.RESOLVE)
    assert allowed(Role.LEAD, Action.EXPORT) and allowed(Role.LEAD, Action.RESOLVE)
    assert not allowed(Role.LEAD, Action.MANAGE_USERS)
    assert allowed(Role.ADMIN, Action.MANAGE_USERS)


def test_a_refusal_names_the_role_it_takes_and_the_one_the_person_has() -> None:
    assert denial("ann", Role.ANNOTATOR, Action.EXPORT) == (
        "it needs the lead role to export training data (ann is annotator)"
    )
    assert "removed by an admin" in (denial("ann", Role.DISABLED, Action.REVIEW) or "")
    assert "not a member" in (denial("zed", None, Action.REVIEW) or "")
    assert denial("lee", Role.LEAD, Action.EXPORT) is None
    with pytest.raises(AccessDenied, match="needs the admin role to change people's roles"):
        require("lee", Role.LEAD, Action.MANAGE_USERS)


def test_local_and_command_line_use_are_trusted_logins_are_not() -> None:
    assert Mode.LOCAL.trusted and Mode.CLI.trusted
    assert not Mode.OIDC.trusted and not Mode.PROXY.trusted
    assert Actor.command_line().mode is Mode.CLI


def test_settings_default_to_local_and_the_environment_wins_over_the_secrets() -> None:
    assert load_settings({}).mode is Mode.LOCAL
    secrets = {"auth": "oidc", "admins": ["root@example.com"], "leads": ["lee@example.com"]}
    settings = load_settings({}, secrets)
    assert settings.mode is Mode.OIDC and settings.oidc_claim == "email"
    assert settings.first_role("root@example.com") is Role.ADMIN
    assert settings.first_role("lee@example.com") is Role.LEAD
    assert settings.first_role("ann@example.com") is Role.ANNOTATOR
    env = {"CODESEARCH_AUTH": "proxy", "CODESEARCH_PROXY_HEADER": "X-Forwarded-Email"}
    proxied = load_settings(env, secrets)
    assert proxied.mode is Mode.PROXY and proxied.proxy_header == "X-Forwarded-Email"
    assert "X-Forwarded-Email" in proxied.describe()
    closed = load_settings({"CODESEARCH_UNKNOWN_USERS": "refuse", "CODESEARCH_ADMINS": "a, b"})
    assert closed.first_role("stranger") is None
    assert closed.admins == {"a", "b"}


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CODESEARCH_AUTH": "ldap"}, "use local, oidc or proxy"),
        ({"CODESEARCH_AUTH": "cli"}, "use local, oidc or proxy"),
        ({"CODESEARCH_AUTH": "proxy"}, "needs the header that names the user"),
        ({"CODESEARCH_UNKNOWN_USERS": "guest"}, "use annotator or refuse"),
        ({"CODESEARCH_MAX_UPLOAD_MB": "0"}, "1-4096"),
        ({"CODESEARCH_ADMINS": "ok,bad\nname"}, "admins: a name cannot hold control"),
    ],
)
def test_a_wrong_setting_is_named_in_the_error(env: dict[str, str], message: str) -> None:
    with pytest.raises(CodesearchError, match=message):
        load_settings(env)
