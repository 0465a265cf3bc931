"""`codesearch db audit / users / role`: the audit trail and roles from the command line."""

from __future__ import annotations

import getpass
import json
from datetime import timedelta
from pathlib import Path

import pytest
from store_helpers import blueprint, executed, proposal

from codesearch_core.access import Actor, Mode, Role, load_settings
from codesearch_core.cli import main
from codesearch_core.store import PROPOSAL, Store, utc_now

pytestmark = pytest.mark.usefixtures("fixtures_corpus")


def test_audit_prints_who_did_what_and_filters_by_time_actor_and_action(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "studio.duckdb"
    with Store(db) as store:
        bp = blueprint(0)
        store.blueprints.add([bp])
        ids = store.add_proposals([proposal(bp, "a")])
        executed(store, ids)
        ann = store.acting_as(Actor("ann@x", Mode.OIDC))
        ann.sign_in(load_settings({}, {"auth": "oidc"}))
        ann.queue(PROPOSAL).decide(ids[0], "reject", "ann@x", note="matches too much")
    assert main(["db", "audit", "--db", str(db), "--json", "--action", "decision"]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (row["actor"], row["role"], row["mode"], row["action"], row["target"]) == (
        "ann@x",
        "annotator",
        "oidc",
        "decision.reject",
        ids[0],
    )
    assert row["detail"]["note"] == "matches too much"
    assert main(["db", "audit", "--db", str(db), "--since", "1h"]) == 0
    text = capsys.readouterr().out
    assert "ann@x (annotator, oidc)  decision.reject" in text and "user.join" in text
    tomorrow = (utc_now() + timedelta(days=1)).date().isoformat()
    assert main(["db", "audit", "--db", str(db), "--since", tomorrow]) == 0
    assert capsys.readouterr().out == ""
    assert main(["db", "audit", "--db", str(db), "--actor", "nobody"]) == 0
    assert capsys.readouterr().out == ""


def test_role_makes_an_admin_from_the_command_line_and_is_audited_as_its_runner(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "studio.duckdb"
    assert main(["db", "init", "--db", str(db)]) == 0
    assert main(["db", "role", "--db", str(db), "root@x", "admin"]) == 0
    assert main(["db", "users", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "root@x: new -> admin" in out and "root@x\tadmin" in out
    with Store(db) as store:
        assert store.acting_as(Actor("root@x", Mode.PROXY)).role() is Role.ADMIN
    assert main(["db", "audit", "--db", str(db), "--json", "--action", "role"]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (row["actor"], row["mode"], row["target"]) == (getpass.getuser(), "cli", "root@x")


def test_a_role_given_while_the_studio_has_no_login_says_it_changes_nothing_yet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "studio.duckdb"
    monkeypatch.chdir(tmp_path)  # no .streamlit/secrets.toml here: the environment decides
    monkeypatch.delenv("CODESEARCH_AUTH", raising=False)
    assert main(["db", "role", "--db", str(db), "ann", "lead"]) == 0
    said = capsys.readouterr()
    assert "ann: new -> lead" in said.out
    assert "runs in local mode (no login), where everyone acts as an admin" in said.err
    # Behind a login proxy the role is what decides: nothing to warn about.
    monkeypatch.setenv("CODESEARCH_AUTH", "proxy")
    monkeypatch.setenv("CODESEARCH_PROXY_HEADER", "X-Forwarded-Email")
    assert main(["db", "role", "--db", str(db), "ann", "annotator"]) == 0
    said = capsys.readouterr()
    assert "ann: lead -> annotator" in said.out and said.err == ""


def test_a_bad_since_or_role_is_refused_with_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "studio.duckdb"
    with pytest.raises(SystemExit) as bad_since:
        main(["db", "audit", "--db", str(db), "--since", "last week"])
    assert bad_since.value.code == 2
    assert "is not a date (2026-11-01)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["db", "role", "--db", str(db), "x", "owner"])
    assert "invalid choice: 'owner'" in capsys.readouterr().err
