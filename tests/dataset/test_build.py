"""The build: the same recipe gives the same bytes, a stopped build resumes, and an error leaves
nothing half-written in DIR."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from dataset_support import SMALL, file_hashes, small_variant

from codesearch_core.dataset import (
    STAGES,
    BuildInterrupted,
    BuildResult,
    Hooks,
    build_dataset,
    load_recipe,
)
from codesearch_core.dataset.items import read_items, read_runs
from codesearch_core.errors import InputFileError
from codesearch_core.export import observe
from codesearch_core.models import RunResult, ToolCall


def test_a_build_writes_the_splits_the_exports_and_the_card(small_build: BuildResult) -> None:
    out, card = small_build.out, small_build.card
    train = [json.loads(line) for line in (out / "data/train.jsonl").read_text().splitlines()]
    held = [json.loads(line) for line in (out / "data/eval.jsonl").read_text().splitlines()]
    assert {i["corpus"] for i in train} == {"webshop"} and {i["corpus"] for i in held} == {"ledger"}
    assert all(i["verified"]["ok"] and i["verified"]["reward"] >= 0.9 for i in train + held)
    assert card["splits"]["train"]["items"] == len(train) and card["splits"]["eval"][
        "items"
    ] == len(held)
    for fmt in ("xlam", "hf-chat", "hf-prompts"):
        assert card["exports"][fmt]["train"]["rows"] == len(train)  # no plan among the seeds here
        assert (out / f"exports/{fmt}/eval.jsonl").is_file()
    assert card["recipe"]["text"] == SMALL.read_text(encoding="utf-8")
    assert set(card["corpora"]) == {"webshop", "ledger"} and set(card["tools"]) >= {
        "rg",
        "ast-grep",
    }
    assert {"tool", "rule", "language", "difficulty", "empty_answers", "plans"} <= set(card["mix"])
    assert card["diversity"]["distinct_bigrams"] > 0
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert card["recipe"]["sha256"] in readme and 'config_name: "xlam"' in readme


def test_the_second_opinion_drops_items_with_their_reasons_and_the_funnel_counts_them(
    small_build: BuildResult,
) -> None:
    out, card = small_build.out, small_build.card
    work = out / ".work"
    dropped = [json.loads(line) for line in (work / "second_opinion/dropped.jsonl").open()]
    # The fixture corpora hold such items: `System.out.println` also called unqualified, a
    # not-awaited call on a comment's line, ...
    assert dropped and all(d["why"].split(":")[0] in ("missed", "included") for d in dropped)
    verified = {i["id"]: i for i in read_items(work / "verify/items.jsonl")}
    assert all(verified[d["id"]]["verified"]["ok"] for d in dropped)  # verification saw nothing
    kept = {
        json.loads(line)["id"]
        for f in ("train", "eval")
        for line in (out / f"data/{f}.jsonl").open()
    }
    assert not kept & {d["id"] for d in dropped}
    stages = {s["stage"]: s for s in card["funnel"]}
    second = stages["second opinion"]
    assert sum(second["dropped"].values()) == len(dropped)
    assert second["items"] == stages["verified"]["items"] - len(dropped)
    assert stages["kept"]["items"] == len(kept)
    assert "| second opinion |" in (out / "README.md").read_text(encoding="utf-8")


def test_the_mix_caps_hold_in_the_built_data_set(small_build: BuildResult) -> None:
    mix = small_build.card["mix"]
    assert all(v["share"] <= 0.5 for k, v in mix["rule"].items() if k != "seed")
    assert all(v["share"] <= 0.9 for v in mix["tool"].values())
    assert mix["tool"]["ripgrep_search"]["share"] >= 0.1


@pytest.mark.slow
def test_building_twice_gives_identical_files(small_build: BuildResult, tmp_path: Path) -> None:
    again = build_dataset(load_recipe(SMALL), tmp_path / "again")
    assert again.resumed == ()
    assert file_hashes(again.out) == file_hashes(small_build.out)


@pytest.mark.slow
def test_a_stopped_build_resumes_from_its_last_finished_stage(
    small_build: BuildResult, tmp_path: Path
) -> None:
    out = tmp_path / "ds"
    started: list[str] = []

    def on_stage(stage: str, resumed: bool) -> None:
        started.append(stage)

    # Stopped as the filter stage is about to start: synthesize, verify and the second opinion
    # are finished.
    with pytest.raises(BuildInterrupted) as stop:
        build_dataset(
            load_recipe(SMALL),
            out,
            Hooks(on_stage=on_stage, should_stop=lambda: "filter" in started),
        )
    assert stop.value.stage == "filter"
    assert not (out / "data").exists() and not (out / "card.json").exists()
    assert sorted(p.name for p in (out / ".work").iterdir() if not p.name.startswith(".")) == [
        "second_opinion", "synthesize", "verify",
    ]  # fmt: skip
    again = build_dataset(load_recipe(SMALL), out)
    assert again.resumed == STAGES[:3]
    assert file_hashes(out) == file_hashes(small_build.out)


def _ledger_only(tmp_path: Path, mix: str) -> Path:
    """The small recipe on ledger alone (10 files: a build of a few seconds), with `mix`."""
    webshop = 'name = "webshop"\nsnapshot = "4204ea579f3e895a41b6ff7511e969ad35dea0e4e7da9eb711dffb107f2e7a29"'
    return small_variant(
        tmp_path,
        (f"[[corpora]]\n{webshop}\n\n", ""),
        ('train = ["webshop"]\neval = ["ledger"]', 'train = ["ledger"]'),
        ("max_tool_share = 0.9", mix),
    )


def test_a_build_that_fails_leaves_nothing_half_written_in_its_folder(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    # No tool may have any share: no item is left, the filter stage fails.
    with pytest.raises(InputFileError, match="no item is left after the filters and mix caps"):
        build_dataset(load_recipe(_ledger_only(tmp_path, "max_tool_share = 0.0")), out)
    visible = sorted(str(p.relative_to(out)) for p in out.rglob("*") if ".work" not in p.parts)
    assert visible == ["notes.txt"]
    assert not list((out / ".work").glob("*.tmp")) and not (out / ".work" / "filter").exists()


@pytest.mark.slow
def test_new_mix_caps_rerun_the_filter_and_the_stages_after_it_only(built_copy: Path) -> None:
    assert (built_copy / "exports" / "hf-prompts" / "train.jsonl").is_file()
    recipe = small_variant(
        built_copy.parent,
        ("max_rule_share = 0.5", "max_rule_share = 0.3"),
        ('formats = ["xlam", "hf-chat", "hf-prompts"]', 'formats = ["xlam", "hf-chat"]'),
    )
    again = build_dataset(load_recipe(recipe), built_copy)
    assert again.resumed == ("synthesize", "verify", "second_opinion")
    assert all(v["share"] <= 0.3 for k, v in again.card["mix"]["rule"].items() if k != "seed")
    assert "max_rule_share = 0.3" in (built_copy / "README.md").read_text()
    # The format dropped from the recipe leaves no file behind that would pass for this build's.
    assert sorted(p.name for p in (built_copy / "exports").iterdir()) == ["hf-chat", "xlam"]


@pytest.mark.slow
def test_the_export_observes_the_runs_of_the_verify_stage(
    built_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = built_copy / ".work"
    singles = [i["id"] for i in read_items(work / "verify" / "items.jsonl") if i["tool"] != "plan"]
    assert sorted(read_runs(work / "verify" / "runs.jsonl")) == sorted(singles)
    before = file_hashes(built_copy)
    ran: list[str] = []
    real = observe.run_tool_call

    def counted(call: ToolCall, root: Path) -> RunResult:
        ran.append(call.to_json())
        return real(call, root)  # the real tool, counted

    monkeypatch.setattr(observe, "run_tool_call", counted)
    recipe = load_recipe(SMALL)
    for kept_runs in (True, False):
        shutil.rmtree(work / "export")
        shutil.rmtree(work / "card")
        if not kept_runs:
            (work / "verify" / "runs.jsonl").unlink()  # a verify stage of an older build
        again = build_dataset(recipe, built_copy)
        assert again.resumed == ("synthesize", "verify", "second_opinion", "filter", "split")
        # The same files whether the observations come from verify's runs or from new ones.
        assert file_hashes(built_copy) == before
        assert bool(ran) is not kept_runs
