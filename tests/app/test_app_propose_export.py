"""The Propose page makes, stores, executes and grades proposals; the Export page previews and
writes training data with its manifest."""

from __future__ import annotations

import json
import os
import socket
import tempfile
from pathlib import Path

import pytest
from app_support import (
    open_app,
    seed_reviewable,
    stored,
    texts,
)

from codesearch_core.models import DecisionAction
from codesearch_core.store import PROPOSAL


def test_proposing_with_mutations_stores_executes_and_grades(studio_db: Path) -> None:
    at = open_app("pages/propose.py")
    at.selectbox(key="pf:corpus").set_value("ledger").run()
    at.number_input(key="pe:mut_n").set_value(2).run()
    at.button(key="propose_start").click().run()
    assert not at.exception and not texts(at, "error")
    assert any(
        s.startswith("Last run:") and "executed and graded" in s for s in texts(at, "success")
    )
    with stored(studio_db) as store:
        counts = store.counts()
        engines = {i.engine for i in store.review_queue(limit=1000).items}
        blueprints = {i.blueprint_id for i in store.review_queue(limit=1000).items}
    assert counts.proposals > 0 and counts.executed == counts.proposals
    assert 0 < counts.graded <= counts.executed  # a run that failed has no span grade
    assert engines == {"mutations"}
    assert all(b.startswith("ledger-") for b in blueprints)


def test_blueprints_selected_on_the_blueprints_page_are_the_ones_proposed_for(
    studio_db: Path,
) -> None:
    at = open_app("pages/blueprints.py")
    at.session_state["bp_table"] = {"selection": {"rows": [0, 2], "columns": [], "cells": []}}
    at.run()
    at.button(key="bp_propose_selected").click().run()
    assert not at.exception
    assert any("2 blueprints selected" in i for i in texts(at, "info"))
    at.switch_page("pages/propose.py")  # AppTest stays on the old page after an st.switch_page
    at.button(key="propose_start").click().run()
    with stored(studio_db) as store:
        listed = store.blueprints.list(limit=3).items
        proposed_for = {i.blueprint_id for i in store.review_queue(limit=1000).items}
    assert proposed_for == {listed[0].id, listed[2].id}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_engine_that_is_down_is_a_message_and_stores_nothing(studio_db: Path) -> None:
    at = open_app("pages/propose.py")
    at.segmented_control(key="pe:kind").set_value("openai").run()
    at.text_area(key="pe:oa_urls").input(f"http://127.0.0.1:{_closed_port()}/v1").run()
    at.text_input(key="pe:oa_model").input("tiny").run()
    at.button(key="propose_start").click().run()
    assert not at.exception
    assert any("cannot reach" in e for e in texts(at, "error"))
    with stored(studio_db) as store:
        assert store.counts().proposals == 0


def test_the_vllm_choice_without_vllm_installed_says_how_to_get_it(studio_db: Path) -> None:
    at = open_app("pages/propose.py")
    at.segmented_control(key="pe:kind").set_value("vllm").run()
    assert not at.exception
    # the default tensor-parallel size, and the default preset's tool format
    assert at.number_input(key="pe:vllm_tp:Qwen/Qwen2.5-Coder-7B-Instruct").value == 2
    assert at.selectbox(key="pe:vllm_format:Qwen/Qwen2.5-Coder-7B-Instruct").value == "hermes"
    assert any("vLLM is not installed" in w for w in texts(at, "warning"))
    assert at.button(key="propose_start").disabled


def test_a_malformed_proposals_upload_names_the_line_and_stores_nothing(studio_db: Path) -> None:
    at = open_app("pages/propose.py")
    at.segmented_control(key="pe:kind").set_value("import").run()
    data = b'{"blueprint_id": "no-such-blueprint", "raw_text": "{}"}\n'
    at.file_uploader(key="pe:upload").set_value(("batch.jsonl", data, "application/jsonl")).run()
    at.button(key="propose_start").click().run()
    assert not at.exception
    (error,) = [e for e in texts(at, "error") if "batch.jsonl:1" in e]
    assert "no-such-blueprint" in error
    # Bug 11: the error named the server's temp copy of the upload (/tmp/tmpXXXX/batch.jsonl).
    assert "upload:batch.jsonl:1" in error
    assert tempfile.gettempdir() not in error
    with stored(studio_db) as store:
        assert store.counts().proposals == 0


def test_export_writes_the_accepted_items_and_a_manifest(
    studio_db: Path, reviewable_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODESEARCH_EXPORTS", str(tmp_path / "out"))
    queue = seed_reviewable(studio_db, reviewable_template)
    with stored(studio_db) as store:
        ran = [i for i in queue if (r := store.review_item(i)) and r.execution and r.execution.ok]
        for item in ran[:3]:
            store.queue(PROPOSAL).decide(item, DecisionAction.ACCEPT, "ann")
        store.queue(PROPOSAL).decide(ran[3], DecisionAction.REJECT, "ann")
    at = open_app("pages/export.py")
    assert [m.value for m in at.metric][:2] == ["3", "1"]
    assert len(at.json) >= 1  # the preview
    out = tmp_path / "out" / "xlam.jsonl"
    at.text_input(key="ex:path:xlam").input("xlam.jsonl").run()
    at.button(key="ex:write").click().run()
    assert not at.exception and not texts(at, "error")
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 3
    assert {"id", "query", "tools", "answers"} <= set(records[0])
    manifest = json.loads((out.parent / "xlam.jsonl.manifest.json").read_text())
    assert manifest["rows"] == 3 and manifest["format"] == "xlam"
    assert manifest["extra"]["left_out"]["open"] >= 1 and "resolved" in manifest["extra"]["rule"]
    assert any("Wrote **3** records" in s for s in texts(at, "success"))
    # Bug 10: exports were mode 0600, unreadable to the trainer's account.
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask


@pytest.mark.parametrize("name", ["../../x.jsonl", "/tmp/x.jsonl", "sub/../../x.jsonl"])
def test_export_writes_only_inside_the_exports_folder(
    studio_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Bug 10: "Write to path" accepted `../../x`."""
    monkeypatch.setenv("CODESEARCH_EXPORTS", str(tmp_path / "exports" / "here"))
    at = open_app("pages/export.py")
    at.text_input(key="ex:path:xlam").input(name).run()
    at.button(key="ex:write").click().run()
    assert not at.exception
    assert any("inside the exports folder" in e for e in texts(at, "error"))
    assert not (tmp_path / "x.jsonl").exists() and not Path("/tmp/x.jsonl").exists()


def test_export_to_an_unwritable_path_is_a_message_and_replaces_the_last_one(
    studio_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODESEARCH_EXPORTS", str(tmp_path / "exports"))
    (tmp_path / "exports").mkdir()
    (tmp_path / "exports" / "file").write_text("not a directory")
    at = open_app("pages/export.py")
    at.text_input(key="ex:path:xlam").input("ok.jsonl").run()
    at.button(key="ex:write").click().run()
    assert any("Wrote" in s for s in texts(at, "success"))
    at.text_input(key="ex:path:xlam").input("file/x.jsonl").run()
    at.button(key="ex:write").click().run()
    assert not at.exception
    assert any(e.startswith("Not written") for e in texts(at, "error"))
    # Bug 9: the earlier success no longer stands beside the new failure.
    assert not any("Wrote" in s for s in texts(at, "success"))


def test_verifying_with_a_corpus_missing_leaves_its_proposals_pending_and_says_so(
    studio_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app_support import release_app_store

    from codesearch_core import ingest
    from codesearch_core.models import Blueprint, Proposal
    from codesearch_core.store import Store

    release_app_store()
    with Store(studio_db) as store:
        ingest.ensure_seeded(store)
        seed = store.blueprints.get("ledger-println-calls")
        assert seed is not None
        gone = Blueprint(
            id="gone-println", intent="Find println elsewhere", reference_call=seed.reference_call,
            corpus="gone", expected=seed.expected, language="java",
        )  # fmt: skip
        store.blueprints.add([gone])
        call = seed.reference_call
        store.add_proposals([Proposal(gone.id, "test", "m", call.to_json(), call, True)])
    at = open_app("pages/propose.py")
    at.button(key="propose_verify").click().run()
    assert not at.exception
    warnings = " ".join(texts(at, "warning"))
    assert "1 proposal(s) left pending: their corpus `gone` is not on this machine" in warnings
