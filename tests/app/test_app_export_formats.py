"""The Export page offers every format; with seeds and graded mutations and no review yet, the
reward-ranked preference layout writes pairs (the reference calls chosen); the agent formats count
and write the gym's episodes, leaving out (and counting) those whose corpus is gone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from app_support import (
    open_app,
    seed_reviewable,
    stored,
    texts,
)
from export_support import EPISODE_SEED_IDS, review_episodes

from codesearch_core.export import ExportFormat
from codesearch_core.gym import ReferencePolicy, as_tasks, rollouts, seed_blueprints

REPO = Path(__file__).resolve().parents[2]


def test_the_export_page_offers_every_format_and_writes_ranked_pairs_unreviewed(
    studio_db: Path, reviewable_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODESEARCH_EXPORTS", str(tmp_path / "out"))
    seed_reviewable(studio_db, reviewable_template)
    at = open_app("pages/export.py")
    offered = [label.split(": ", 1)[0] for label in at.selectbox(key="ex:format").options]
    assert offered == [f.value for f in ExportFormat]
    at.selectbox(key="ex:format").set_value("hf-preference").run()
    assert not at.exception and len(at.json) >= 1  # the preview: pairs before any review
    at.text_input(key="ex:path:hf-preference").input("pref.jsonl").run()
    at.button(key="ex:write").click().run()
    assert not at.exception and not texts(at, "error")
    rows = [json.loads(x) for x in (tmp_path / "out" / "pref.jsonl").read_text().splitlines()]
    assert rows and all(r["margin"] > 0 for r in rows)
    assert (tmp_path / "out" / "README.md").is_file()


def test_the_eval_split_is_held_out_until_the_toggle_includes_it(
    studio_db: Path, reviewable_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODESEARCH_EXPORTS", str(tmp_path / "out"))
    seed_reviewable(studio_db, reviewable_template)
    with stored(studio_db) as store:
        ledger = [bp.id for bp in store.blueprints.list(limit=1000).items if bp.corpus == "ledger"]
        store.blueprints.set_split(ledger, "eval")
    at = open_app("pages/export.py")
    at.selectbox(key="ex:format").set_value("hf-prompts").run()
    assert any(f"{len(ledger)} blueprint(s) of the eval split are held out" in c
               for c in texts(at, "caption"))  # fmt: skip
    at.text_input(key="ex:path:hf-prompts").input("p.jsonl").run()
    at.button(key="ex:write").click().run()
    written = (tmp_path / "out" / "p.jsonl").read_text().splitlines()
    assert not set(ledger) & {json.loads(x)["blueprint_id"] for x in written}
    at.toggle(key="ex:eval").set_value(True).run()
    at.button(key="ex:write").click().run()
    assert not at.exception and not texts(at, "error")
    written = (tmp_path / "out" / "p.jsonl").read_text().splitlines()
    assert set(ledger) <= {json.loads(x)["blueprint_id"] for x in written}


def test_the_agent_formats_count_and_write_the_accepted_episodes(
    studio_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODESEARCH_EXPORTS", str(tmp_path / "out"))
    # Reference episodes on two corpora (copies: one is then removed, its episode kept).
    corpora = tmp_path / "corpora"
    for name in ("webshop", "telemetry"):
        shutil.copytree(REPO / "data" / "corpora" / name, corpora / name)
    monkeypatch.setenv("CODESEARCH_CORPORA", str(corpora))
    tasks = {t.blueprint.id: t for t in as_tasks(seed_blueprints()).tasks}
    with stored(studio_db) as store:
        played = [tasks[i] for i in EPISODE_SEED_IDS]
        assert rollouts(ReferencePolicy(), played, store).kept == 3
        review_episodes(store)
    shutil.rmtree(corpora / "telemetry")
    at = open_app("pages/export.py")
    at.selectbox(key="ex:format").set_value("hf-agent").run()
    assert not at.exception and not texts(at, "error")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Episodes"] == "2" and metrics["Corpus gone"] == "1"
    assert any("replayed in the gym" in c for c in texts(at, "caption"))
    assert len(at.json) == 2  # the preview: one record per episode
    at.text_input(key="ex:path:hf-agent").input("agent.jsonl").run()
    at.button(key="ex:write").click().run()
    assert not at.exception and not texts(at, "error")
    rows = [json.loads(x) for x in (tmp_path / "out" / "agent.jsonl").read_text().splitlines()]
    assert [r["messages"][1]["content"].split("\n", 1)[0] for r in rows] == ["Corpus: webshop"] * 2
    assert any("Wrote **2** records" in s for s in texts(at, "success"))


def test_dpo_steps_counts_previews_and_writes_the_corrected_steps(
    studio_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codesearch_core.gym import correct_step

    monkeypatch.setenv("CODESEARCH_EXPORTS", str(tmp_path / "out"))
    task = next(
        t for t in as_tasks(seed_blueprints()).tasks if t.blueprint.id == EPISODE_SEED_IDS[0]
    )
    with stored(studio_db) as store:
        assert rollouts(ReferencePolicy(), [task], store).kept == 1
        (episode,) = store.episodes.list()
        edit = {"name": "ripgrep_search", "arguments": {"pattern": "FIXME"}}
        correct_step(store, episode.episode_id, 1, edit)
    at = open_app("pages/export.py")
    at.selectbox(key="ex:format").set_value("dpo-steps").run()
    assert not at.exception and not texts(at, "error")
    assert {m.label: m.value for m in at.metric}["Pairs"] == "1"
    assert len(at.json) == 1  # the preview: the one pair
    at.text_input(key="ex:path:dpo-steps").input("steps.jsonl").run()
    at.button(key="ex:write").click().run()
    assert not at.exception and not texts(at, "error")
    (row,) = [json.loads(x) for x in (tmp_path / "out" / "steps.jsonl").read_text().splitlines()]
    assert row["chosen"][0]["tool_calls"][0]["function"]["arguments"] == {"pattern": "FIXME"}
    assert row["rejected"][0]["tool_calls"][0]["function"] == {
        "name": episode.trajectory["turns"][0][0]["name"],
        "arguments": episode.trajectory["turns"][0][0]["arguments"],
    }
