"""`codesearch dataset`: build (Ctrl-C exits 130 and the same command resumes), sample and import
verdicts, card; a recipe that cannot be built exits 2 naming its line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dataset_support import small_variant

from codesearch_core.cli import main
from tests.ctrl_c_support import ctrl_c_when

WEBSHOP = 'name = "webshop"\nsnapshot = "4204ea579f3e895a41b6ff7511e969ad35dea0e4e7da9eb711dffb107f2e7a29"'


def _ledger_recipe(tmp_path: Path) -> Path:
    """The small recipe on ledger alone (10 files: a build of a few seconds)."""
    return small_variant(
        tmp_path,
        (f"[[corpora]]\n{WEBSHOP}\n\n", ""),
        ('train = ["webshop"]\neval = ["ledger"]', 'train = ["ledger"]'),
    )


@pytest.mark.slow
def test_ctrl_c_exits_130_and_the_same_command_resumes_then_sample_and_card(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The card reads a QA queue from the default store when there is one: never the checkout's.
    monkeypatch.setenv("CODESEARCH_DB", str(tmp_path / "studio.duckdb"))
    recipe, out = _ledger_recipe(tmp_path), tmp_path / "ds"
    command = ["dataset", "build", str(recipe), "--out", str(out)]
    run = ctrl_c_when(command, rb"\[1/7\] synthesize")
    assert run.returncode == 130, run.terminal
    assert "run the same command again to go on" in run.terminal and "Traceback" not in run.terminal
    assert not (out / "card.json").exists() and not (out / "data").exists()

    assert main(command) == 0
    printed = capsys.readouterr().out
    assert "items (eval 0, train" in printed and (out / "card.json").is_file()

    assert (
        main(["dataset", "sample", str(out), "--n", "4", "--stratify", "tool", "--seed", "1"]) == 0
    )
    sample = [json.loads(line) for line in (out / "qa/sample.jsonl").read_text().splitlines()]
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text("".join(
        json.dumps({"id": s["id"], "verdict": "incorrect" if i == 0 else "correct"}) + "\n"
        for i, s in enumerate(sample)
    ))  # fmt: skip
    capsys.readouterr()
    assert main(["dataset", "sample", str(out), "--import-verdicts", str(verdicts)]) == 0
    said = capsys.readouterr().out
    assert "3 of 4 reviewed items correct; estimated wrong in the data set" in said
    assert main(["dataset", "card", str(out)]) == 0
    card = capsys.readouterr().out
    figures = json.loads((out / "card.json").read_text())["qa"]
    assert figures["unweighted"]["share"] == 0.75 and figures["weighting"].startswith(
        "stratum size"
    )
    wrong = 1 - figures["overall"]["share"]
    assert f"Estimated share of wrong items: **{100 * wrong:.1f}%**" in card and "```toml" in card
    assert "## Funnel" in card and "| second opinion |" in card


def test_a_recipe_with_an_unknown_key_exits_2_naming_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recipe = small_variant(tmp_path, ("seed = 7", "seed = 7\nsede = 8"))
    line = recipe.read_text().splitlines().index("sede = 8") + 1
    assert main(["dataset", "build", str(recipe), "--out", str(tmp_path / "ds")]) == 2
    assert f"{recipe}:{line}: synthesis.sede: unknown key" in capsys.readouterr().err
    assert not (tmp_path / "ds").exists()


def test_the_card_of_a_folder_without_a_data_set_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["dataset", "card", str(tmp_path)]) == 2
    assert "dataset build` first" in capsys.readouterr().err
