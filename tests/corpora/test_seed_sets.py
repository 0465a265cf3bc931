"""The named seed sets: what their help text says they hold is what their files hold."""

from __future__ import annotations

import pytest

from codesearch_core.corpora import SEED_SETS, describe_seed_set, load_seed_set, seed_files
from codesearch_core.errors import InputFileError


@pytest.mark.parametrize("name", list(SEED_SETS))
def test_each_set_holds_the_counts_its_description_gives(name: str) -> None:
    blueprints = load_seed_set(name)
    single = sum(bp.plan is None for bp in blueprints)
    assert SEED_SETS[name][:3] == (len(blueprints), single, len(blueprints) - single)
    assert f"{len(blueprints)} blueprints ({single} single-call" in describe_seed_set(name)


def test_seeds_is_the_fixture_file_and_seeds_all_every_file() -> None:
    assert seed_files("seeds") == seed_files("seeds-all")[:1]
    assert {p.name for p in seed_files("seeds-all")} == {
        p.name for p in seed_files("seeds")[0].parent.glob("*.jsonl")
    }
    with pytest.raises(InputFileError, match="no seed set 'seed'"):
        seed_files("seed")
