"""`codesearch verify --stale`, walked as a user would: a pinned corpus, a blueprint, an accepted
proposal; then a hand edit of the corpus (or another tool version) and the re-check that puts the
changed items in Drift, holds them out of exports, and lets a lead decide them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from store_helpers import rg_call

from codesearch_core.cli import main
from codesearch_core.corpora import add_corpus, check_corpus
from codesearch_core.errors import StoreError
from codesearch_core.models import Blueprint, DecisionAction, Proposal, Span
from codesearch_core.store import DRIFT, PROPOSAL, QueueFilters, Store
from codesearch_core.verify import verify_pending, verify_stale


@pytest.fixture
def pinned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    monkeypatch.setenv("CODESEARCH_CORPORA", str(corpora))
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "core.py").write_text("def run():\n    return DB.query(1)\n", encoding="utf-8")
    (src / "pkg" / "other.py").write_text("x = 1\n", encoding="utf-8")
    add_corpus("proj", str(src))
    return corpora / "proj"


def _store(tmp_path: Path) -> tuple[Store, Blueprint, str]:
    bp = Blueprint(
        id="proj-db-query",
        intent="Find the calls to DB.query",
        reference_call=rg_call(r"DB\.query\("),
        corpus="proj",
        expected=(Span("pkg/core.py", 2, 2),),
        language="python",
    )
    store = Store(tmp_path / "s.duckdb")
    store.blueprints.add([bp])
    (pid,) = store.add_proposals(
        [Proposal(bp.id, "test", "m", bp.reference_call.to_json(), bp.reference_call, True)]
    )
    verify_pending(store, workers=1)
    store.queue(PROPOSAL).decide(pid, DecisionAction.ACCEPT, "ana")
    return store, bp, pid


def _answers(store: Store) -> int:
    return store.export_answer_counts(QueueFilters())["answers"]


def test_a_hand_edit_puts_what_changed_in_drift(tmp_path: Path, pinned: Path) -> None:
    store, bp, pid = _store(tmp_path)
    assert store.blueprints.get(bp.id).snapshot == check_corpus("proj").content_id  # type: ignore[union-attr]
    nothing = verify_stale(store)
    assert (nothing.references_checked, nothing.accepted_checked, nothing.drifted) == (0, 0, 0)
    assert _answers(store) == 1

    # A second DB.query in the pinned file, by hand; an unrelated file changes too.
    core = pinned / "pkg" / "core.py"
    os.chmod(core, 0o644)
    core.write_text("def run():\n    return DB.query(1)\n\nDB.query(2)\n", encoding="utf-8")
    assert check_corpus("proj").changed == ("pkg/core.py",)

    report = verify_stale(store)
    assert (report.references_checked, report.accepted_checked) == (1, 1)
    assert (report.references_drifted, report.accepted_drifted) == (1, 1)
    drift = {d.item_id: d for d in store.drift.open()}
    assert set(drift) == {bp.id, pid}
    assert drift[pid].old_findings == (Span("pkg/core.py", 2, 2),)
    assert drift[pid].new_findings == (Span("pkg/core.py", 2, 2), Span("pkg/core.py", 4, 4))
    assert drift[pid].new_snapshot == check_corpus("proj").content_id != drift[pid].old_snapshot
    # Held out of exports until decided, and counted.
    assert _answers(store) == 0
    assert store.export_answer_counts(QueueFilters())["accepted_in_drift"] == 1
    assert store.drift.held_out() == 1
    # Re-running finds nothing new to re-check: the items are in drift already.
    assert verify_stale(store).drifted == 0

    # A: a reference takes the new findings ("updated"), an accepted proposal is "kept".
    store.queue(DRIFT).decide(bp.id, "accept", "lead")
    store.queue(DRIFT).decide(pid, "accept", "lead")
    assert store.drift.open() == []
    # The resolution is the queue's state, in the card's words.
    resolved = {i: store.drift.get(i) for i in (bp.id, pid)}
    assert {i: (d.resolution, d.resolved_by) for i, d in resolved.items() if d} == {
        bp.id: ("updated", "lead"),
        pid: ("kept", "lead"),
    }
    assert store.blueprints.get(bp.id).expected == drift[pid].new_findings  # type: ignore[union-attr]
    assert _answers(store) == 1
    with pytest.raises(StoreError, match="accepted by lead already"):
        store.queue(DRIFT).decide(pid, "reject", "lead")
    after = verify_stale(store)
    assert (after.references_checked, after.accepted_checked) == (0, 0)


def test_another_tool_version_is_re_checked_and_an_unchanged_finding_is_no_drift(
    tmp_path: Path, pinned: Path
) -> None:
    store, _bp, _pid = _store(tmp_path)
    store._write(
        lambda cur: cur.execute(
            'UPDATE executions SET tool_versions = \'{"ast-grep": "0.1.0", "rg": "1.0.0"}\''
        ),
        what="simulate an upgrade",
    )
    report = verify_stale(store)
    assert (report.accepted_checked, report.drifted) == (1, 0)
    assert verify_stale(store).accepted_checked == 0  # the re-run recorded the current tools


def test_a_rejected_drift_is_a_final_reject(tmp_path: Path, pinned: Path) -> None:
    store, _bp, pid = _store(tmp_path)
    core = pinned / "pkg" / "core.py"
    os.chmod(core, 0o644)
    core.write_text("def run():\n    return 0\n", encoding="utf-8")
    verify_stale(store)
    store.queue(DRIFT).decide(pid, "reject", "lead", "the call is gone")
    assert store.current_decision(pid).action == "reject"  # type: ignore[union-attr]
    assert _answers(store) == 0


def test_cli_verify_stale(tmp_path: Path, pinned: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store, _bp, pid = _store(tmp_path)
    store.close()
    core = pinned / "pkg" / "core.py"
    os.chmod(core, 0o644)
    core.write_text("def run():\n    return DB.query(1)\nDB.query(2)\n", encoding="utf-8")
    db = str(tmp_path / "s.duckdb")
    assert main(["verify", "--stale", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "corpus proj: differs from its manifest in 1 file(s)" in out
    assert "1 reference(s) and 1 accepted proposal(s) changed" in out
    assert "1 accepted item(s) held out of exports" in out
    assert f"drift  {pid}" in out


def test_a_proposal_whose_corpus_is_missing_stays_pending_and_the_rest_are_verified(
    tmp_path: Path, pinned: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Seen walking the studio: one blueprint on a corpus not added here aborted the whole run.
    store, bp, _pid = _store(tmp_path)
    elsewhere = Blueprint(
        id="gone-db-query", intent="Find DB.query elsewhere", reference_call=bp.reference_call,
        corpus="gone", expected=bp.expected, language="python",
    )  # fmt: skip
    store.blueprints.add([elsewhere])
    here = rg_call(r"return")
    store.add_proposals(
        [
            Proposal(
                elsewhere.id, "test", "m", bp.reference_call.to_json(), bp.reference_call, True
            ),
            Proposal(bp.id, "test", "m", here.to_json(), here, True),
        ]
    )
    report = verify_pending(store, workers=1)
    assert (report.count, dict(report.skipped)) == (1, {"gone": 1})
    assert store.counts().proposals - store.counts().executed == 1  # still pending
    store.close()
    assert main(["verify", "--db", str(tmp_path / "s.duckdb")]) == 0
    err = capsys.readouterr().err
    assert "left 1 proposal(s) pending: their corpus 'gone' is not on this machine" in err


def test_verify_stamps_each_run_with_the_snapshot_read_before_the_runs(
    tmp_path: Path, pinned: Path
) -> None:
    # The snapshot is read once per corpus before its first run (not walked for every batch), and
    # recorded on every execution of that run.
    store, _, pid = _store(tmp_path)
    stamped = store._read(  # the stamp is in no public view
        lambda cur: cur.execute(
            "SELECT snapshot_id FROM executions WHERE proposal_id = ?", [pid]
        ).fetchall()
    )
    assert stamped == [(check_corpus("proj").content_id,)]
