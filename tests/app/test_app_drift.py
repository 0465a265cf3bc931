"""The Review page's Drift queue, walked with AppTest: a hand edit of a pinned corpus, `verify
--stale`, then a lead keeps one accepted item and takes a reference's new findings."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from app_support import open_app, release_app_store, texts

from codesearch_core import config, studio
from codesearch_core.models import DecisionAction, Proposal
from codesearch_core.store import PROPOSAL, QueueFilters, Store
from codesearch_core.verify import verify_pending, verify_stale

REVIEW = "pages/review.py"
SEED = "ledger-println-calls"


@pytest.fixture
def drifted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A store whose accepted proposal and reference drifted after a hand edit of `ledger`."""
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    shutil.copytree(config.corpora_dir() / "ledger", corpora / "ledger")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(corpora))
    db = tmp_path / "studio.duckdb"
    monkeypatch.setenv("CODESEARCH_DB", str(db))
    release_app_store()
    with Store(db) as store:
        from codesearch_core.ingest import ensure_seeded

        ensure_seeded(store)
        bp = store.blueprints.get(SEED)
        assert bp is not None
        call = bp.reference_call
        (pid,) = store.add_proposals([Proposal(bp.id, "test", "m", call.to_json(), call, True)])
        verify_pending(store, workers=1)
        store.queue(PROPOSAL).decide(pid, DecisionAction.ACCEPT, "ana")
        target = corpora / "ledger" / bp.expected[0].path
        os.chmod(target, 0o644)
        target.write_text(
            target.read_text(encoding="utf-8")
            + '\nclass X { void f() { System.out.println("x"); } }\n',
            encoding="utf-8",
        )
        report = verify_stale(store)
        assert set(report.drifted_ids) >= {pid, SEED}
    return db, pid


def test_a_lead_decides_the_drift_queue(drifted: tuple[Path, str]) -> None:
    db, pid = drifted
    at = open_app(REVIEW, reviewer="lee")
    at.segmented_control(key="review:queue").set_value("Drift").run()
    assert not at.exception
    caption = " ".join(c.value for c in at.caption)
    assert "1 accepted item(s) held out of exports until decided" in caption
    table = at.dataframe[0].value
    assert set(table["item"]) >= {pid, SEED}
    assert any("new]" in m for m in texts(at, "markdown"))  # the before/after counts
    marked = " ".join(str(h.proto.body) for h in at.html)
    assert 'title="extra"' in marked  # the new finding, marked in the file

    # Decide the card (the first row) until the queue is empty: keep the accepted proposal, take
    # each reference's new findings (the edit added a println on purpose).
    for _ in range(len(table)):
        first = str(at.dataframe[0].value["item"].iloc[0])
        label = (
            "Still right: keep it accepted" if first == pid else "Take the new findings as expected"
        )
        next(b for b in at.button if b.label == label).click().run()
        assert any(first in s for s in texts(at, "success")), texts(at, "error")
    assert any("Nothing in drift" in i for i in texts(at, "info"))

    release_app_store()
    with Store(db) as store:
        left = {d.item_id for d in store.drift.open()}
        assert pid not in left and SEED not in left
        assert store.export_answer_counts(QueueFilters())["accepted_in_drift"] == 0


def _card_item(at: object) -> str:
    """The item id the Drift card shows (its first line names it in backticks)."""
    line = next(m for m in texts(at, "markdown") if m.startswith("**accepted proposal**")
                or m.startswith("**reference call**"))  # fmt: skip
    return line.split("`")[1]


def test_skip_moves_on_and_undo_reopens_the_last_drift_decision(drifted: tuple[Path, str]) -> None:
    db, pid = drifted
    at = open_app(REVIEW, reviewer="lee")
    at.segmented_control(key="review:queue").set_value("Drift").run()
    first = _card_item(at)
    next(b for b in at.button if b.label == "Skip").click().run()
    assert any(f"{first}: skipped, it stays open" in s for s in texts(at, "success"))
    second = _card_item(at)
    assert second != first  # a skip moves on, as on every queue
    label = "Still right: keep it accepted" if second == pid else "Keep the expected spans"
    next(b for b in at.button if b.label == label).click().run()
    assert any(f"{second}: kept" in s for s in texts(at, "success")), texts(at, "error")
    assert any("Your progress: 2 of" in p.proto.text for p in at.get("progress"))

    next(b for b in at.button if b.label == "Undo").click().run()
    assert any(f"{second}: undone, it is open again" in s for s in texts(at, "success"))
    assert _card_item(at) == second  # back on the card
    release_app_store()
    with Store(db) as store:
        reopened = store.drift.get(second)
        assert reopened is not None and reopened.resolution is None
        history = store.queue("drift").history(first)
        assert [e.action.value for e in history] == ["skip"]


def test_the_typed_filter_narrows_the_drift_table_and_a_wrong_key_says_the_keys(
    drifted: tuple[Path, str],
) -> None:
    db, pid = drifted
    at = open_app(REVIEW, reviewer="lee")
    at.segmented_control(key="review:queue").set_value("Drift").run()
    every = set(at.dataframe[0].value["item"])
    assert pid in every and len(every) >= 2
    at.text_input(key="drift:filter").input("drifted=proposal").run()
    assert not at.exception, at.exception
    assert set(at.dataframe[0].value["item"]) == {pid}
    assert at.query_params.get("filter") == "drifted=proposal"  # a reload keeps it
    assert _card_item(at) == pid
    at.text_input(key="drift:filter").input("kind=proposal").run()
    assert any("unknown filter 'kind=proposal'" in e and "drifted" in e for e in texts(at, "error"))
    assert set(at.dataframe[0].value["item"]) == every  # every open item until it is fixed
    release_app_store()
    with Store(db) as store:
        assert {d.item_id for d in store.drift.open()} == every  # a filter decides nothing


def test_rejecting_a_drifted_proposal_takes_a_reason_and_a_reference_asks_none(
    drifted: tuple[Path, str],
) -> None:
    db, pid = drifted
    at = open_app(REVIEW, reviewer="lee")
    at.segmented_control(key="review:queue").set_value("Drift").run()
    for _ in range(len(at.dataframe[0].value)):
        if _card_item(at) == pid:
            break
        # A reference's X keeps its spans: nothing is rejected, so no reason is asked.
        assert not [s.key for s in at.selectbox if str(s.key).startswith("drift:reason:")]
        next(b for b in at.button if b.label == "Skip").click().run()
    assert _card_item(at) == pid
    # X on an accepted proposal rejects it, for a proposal's reasons (issue 39).
    reason = at.selectbox(key=f"drift:reason:{pid}")
    assert tuple(reason.options) == studio.reject_reasons(PROPOSAL)
    reason.set_value("finds too much").run()
    next(b for b in at.button if b.label == "Reject it").click().run()
    assert any(f"{pid}: rejected" in s for s in texts(at, "success")), texts(at, "error")
    release_app_store()
    with Store(db) as store:
        (event,) = store.queue("drift").history(pid)
        assert (event.action, event.reason) == (DecisionAction.REJECT, "finds too much")
