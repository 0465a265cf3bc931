"""The recipe: what it declares, and the errors that name the line of a mistake."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from dataset_support import SMALL, small_variant

from codesearch_core.dataset import RecipeError, load_recipe
from codesearch_core.export import ExportFormat


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    return small_variant(tmp_path, (old, new))


def _line_of(path: Path, needle: str) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, start=1) if needle in line)


def test_the_small_recipe_reads_into_typed_parts() -> None:
    recipe = load_recipe(SMALL)
    assert recipe.corpus_names == ("webshop", "ledger")
    assert recipe.split.train == ("webshop",) and recipe.split.eval == ("ledger",)
    assert recipe.synthesis.limit == 20 and recipe.synthesis.seed == 7
    assert recipe.exports.formats == (
        ExportFormat.XLAM,
        ExportFormat.HF_CHAT,
        ExportFormat.HF_PROMPTS,
    )
    assert recipe.mix.min_ripgrep_share == 0.1
    assert [p.name for p in recipe.seed_files] == ["blueprints.jsonl"]


def test_an_unknown_key_is_an_error_naming_its_line(tmp_path: Path) -> None:
    path = _variant(tmp_path, "min_reward = 0.9", "min_reward = 0.9\nmin_rewrd = 0.5")
    with pytest.raises(RecipeError) as err:
        load_recipe(path)
    assert f"{path}:{_line_of(path, 'min_rewrd')}: filters.min_rewrd: unknown key" in str(err.value)


def test_an_unknown_table_is_an_error_naming_its_line(tmp_path: Path) -> None:
    path = _variant(tmp_path, "[mix]", "[mixes]")
    with pytest.raises(RecipeError, match=rf":{_line_of(path, '[mixes]')}: mixes: unknown table"):
        load_recipe(path)


def test_a_value_of_the_wrong_type_names_key_and_line(tmp_path: Path) -> None:
    path = _variant(tmp_path, "limit = 20", 'limit = "twenty"')
    with pytest.raises(
        RecipeError, match=rf":{_line_of(path, 'twenty')}: synthesis.limit: expected"
    ):
        load_recipe(path)


def test_a_corpus_on_both_sides_of_the_split_is_an_error(tmp_path: Path) -> None:
    path = _variant(tmp_path, 'eval = ["ledger"]', 'eval = ["ledger", "webshop"]')
    with pytest.raises(RecipeError, match="webshop is on both sides of the split") as err:
        load_recipe(path)
    assert f":{_line_of(path, 'eval = ')}:" in str(err.value)


def test_a_pin_that_no_longer_matches_names_the_corpus(tmp_path: Path) -> None:
    path = _variant(tmp_path, 'snapshot = "e44e8d12', 'snapshot = "0000000000000000')
    with pytest.raises(RecipeError, match="corpus 'ledger' no longer matches its pin") as err:
        load_recipe(path)
    assert f":{_line_of(path, '0000000000000000')}: corpora.snapshot:" in str(err.value)


def test_a_corpus_not_on_this_machine_is_an_error(tmp_path: Path) -> None:
    path = _variant(tmp_path, 'name = "ledger"', 'name = "no-such-corpus"')
    with pytest.raises(RecipeError, match="corpus 'no-such-corpus' is not on this machine"):
        load_recipe(path)


def test_a_preference_format_is_refused_with_the_formats_a_build_writes(tmp_path: Path) -> None:
    path = _variant(tmp_path, '"hf-prompts"]', '"hf-preference"]')
    with pytest.raises(RecipeError, match=re.escape("a build writes xlam, hf-chat")):
        load_recipe(path)


def test_a_share_above_one_is_refused(tmp_path: Path) -> None:
    path = _variant(tmp_path, "max_rule_share = 0.5", "max_rule_share = 1.5")
    with pytest.raises(RecipeError, match=r"mix\.max_rule_share: a share between 0 and 1"):
        load_recipe(path)
