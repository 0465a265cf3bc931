"""The store refuses what a role may not do and audits what it does, whoever calls it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from codesearch_core.access import AccessDenied, Actor, Mode, Role, load_settings
from codesearch_core.store import PROPOSAL, AuditFilters, ReviewSettings, Store, utc_now
from tests.store_helpers import blueprint, executed, proposal

SETTINGS = load_settings({}, {"auth": "oidc", "admins": ["root@x"], "leads": ["lee@x"]})


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "studio.duckdb") as s:
        yield s


@pytest.fixture
def items(store: Store) -> list[str]:
    bps = [blueprint(i) for i in range(2)]
    store.blueprints.add(bps)
    ids = store.add_proposals([proposal(bp, p) for bp in bps for p in ("a", "b")])
    executed(store, ids)
    return ids


def signed_in(store: Store, name: str) -> Store:
    view = store.acting_as(Actor(name, Mode.OIDC))
    view.sign_in(SETTINGS)
    return view


def test_people_get_their_first_role_when_they_arrive_and_it_is_audited(store: Store) -> None:
    assert signed_in(store, "ann@x").role() is Role.ANNOTATOR
    assert signed_in(store, "lee@x").role() is Role.LEAD
    assert signed_in(store, "root@x").role() is Role.ADMIN
    assert [(u.name, u.role) for u in store.users()] == [
        ("ann@x", Role.ANNOTATOR),
        ("lee@x", Role.LEAD),
        ("root@x", Role.ADMIN),
    ]
    joins = store.audit_log(AuditFilters(action="user.join"))
    assert sorted(e.actor for e in joins) == ["ann@x", "lee@x", "root@x"]
    assert {e.mode for e in joins} == {"oidc"}


def test_a_closed_studio_refuses_strangers(store: Store) -> None:
    closed = load_settings({"CODESEARCH_UNKNOWN_USERS": "refuse"}, {"auth": "oidc"})
    with pytest.raises(AccessDenied, match="not a member of this studio"):
        store.acting_as(Actor("zed@x", Mode.OIDC)).sign_in(closed)
    assert store.users() == []


def test_an_annotator_may_review_but_not_resolve_export_or_edit(
    store: Store, items: list[str]
) -> None:
    ann = signed_in(store, "ann@x")
    ann.queue(PROPOSAL).decide(items[0], "accept", "ann@x")
    with pytest.raises(AccessDenied, match="needs the lead role to make final decisions"):
        ann.queue(PROPOSAL).decide(items[1], "accept", "ann@x", final=True)
    with pytest.raises(AccessDenied, match="needs the lead role to edit"):
        ann.blueprints.upsert(replace(blueprint(0), notes="changed"))
    with pytest.raises(AccessDenied, match="needs the admin role"):
        ann.set_review_settings(ReviewSettings(2, 5.0))
    with pytest.raises(AccessDenied, match="needs the lead role to read the audit"):
        ann.audit_log()
    assert ann.blueprints.upsert(blueprint(7)) == "created"  # authoring a new one is theirs
    lee = signed_in(store, "lee@x")
    lee.queue(PROPOSAL).decide(items[1], "accept", "lee@x", final=True)
    assert lee.blueprints.upsert(replace(blueprint(0), notes="changed")) == "updated"
    assert store.review_settings() == ReviewSettings()  # the refused change left nothing


def test_someone_logged_in_acts_only_as_themselves(store: Store, items: list[str]) -> None:
    """A forged reviewer name (a crafted request, a query parameter) is refused by the store."""
    ann = signed_in(store, "ann@x")
    with pytest.raises(AccessDenied, match="can act only as themselves, not as 'lee@x'"):
        ann.queue(PROPOSAL).decide(items[0], "reject", "lee@x")
    with pytest.raises(AccessDenied, match="only as themselves"):
        ann.queue(PROPOSAL).lease_next(None, "lee@x")
    assert store.queue(PROPOSAL).history(items[0]) == ()


def test_a_role_removed_while_someone_works_refuses_their_next_action(
    store: Store, items: list[str]
) -> None:
    ann = signed_in(store, "ann@x")
    ann.queue(PROPOSAL).decide(items[0], "accept", "ann@x")
    root = signed_in(store, "root@x")
    assert root.set_role("ann@x", Role.DISABLED) is Role.ANNOTATOR
    with pytest.raises(AccessDenied, match="access was removed by an admin"):
        ann.queue(PROPOSAL).decide(items[1], "accept", "ann@x")
    assert signed_in(store, "ann@x").role() is Role.DISABLED  # arriving again does not restore it
    change = store.audit_log(AuditFilters(action="role.change"))[0]
    assert (change.actor, change.target, change.detail) == (
        "root@x",
        "ann@x",
        {"old": "annotator", "new": "disabled"},
    )


def test_only_admins_change_roles_and_the_last_admin_stays_one(store: Store) -> None:
    lee = signed_in(store, "lee@x")
    with pytest.raises(AccessDenied, match="needs the admin role to change people's roles"):
        lee.set_role("lee@x", Role.ADMIN)
    root = signed_in(store, "root@x")
    with pytest.raises(AccessDenied, match="last admin"):
        root.set_role("root@x", Role.LEAD)
    root.set_role("lee@x", Role.ADMIN)
    root.set_role("root@x", Role.LEAD)
    # an admin named in the settings is one again when they next arrive
    assert signed_in(store, "root@x").role() is Role.ADMIN


def test_every_change_is_audited_with_who_when_and_what(store: Store, items: list[str]) -> None:
    before = utc_now() - timedelta(seconds=1)
    ann = signed_in(store, "ann@x")
    ann.queue(PROPOSAL).decide(items[0], "reject", "ann@x", note="too broad")
    ann.queue(PROPOSAL).undo("ann@x")
    signed_in(store, "root@x").set_review_settings(ReviewSettings(2, 5.0))
    log = store.audit_log(AuditFilters(since=before))
    actions = [(e.actor, e.action, e.target) for e in reversed(log)]
    assert ("ann@x", "decision.reject", items[0]) in actions
    assert ("ann@x", "decision.undo", items[0]) in actions
    assert ("root@x", "settings.change", "review") in actions
    reject = store.audit_log(AuditFilters(action="decision.reject"))[0]
    assert reject.detail["note"] == "too broad" and reject.role == "annotator"
    assert reject.at >= before
    assert [e.action for e in store.audit_log(AuditFilters(action="decision", actor="ann@x"))] == [
        "decision.undo",
        "decision.reject",
    ]
    # the command line acts as the person running it, and is audited too
    cli = [e for e in store.audit_log(AuditFilters(action="blueprints.add"))]
    assert cli and cli[-1].mode == "cli"


def test_a_refused_change_writes_neither_the_change_nor_an_audit_row(
    store: Store, items: list[str]
) -> None:
    ann = signed_in(store, "ann@x")
    n = len(store.audit_log(limit=10_000))
    with pytest.raises(AccessDenied):
        ann.queue(PROPOSAL).decide(items[0], "accept", "ann@x", final=True)
    assert len(store.audit_log(limit=10_000)) == n
    assert store.queue(PROPOSAL).history(items[0]) == ()


def test_many_people_arriving_at_once_are_each_added_once(store: Store) -> None:
    names = [f"user{i}@x" for i in range(8)]
    threads = [threading.Thread(target=signed_in, args=(store, n)) for n in names * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(u.name for u in store.users()) == names
    assert len(store.audit_log(AuditFilters(action="user.join"))) == len(names)
