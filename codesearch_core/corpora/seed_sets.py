"""The named seed sets: what `--blueprints seeds` and `--blueprints seeds-all` mean, the same in
every command that takes them (`eval`, `eval --agent`, `propose`, `rollouts`, `gym tasks`, `gym
serve`) and in the verifiers environment.

`seeds` is the fixture corpora's seed file, whose corpora ship with the repository, so it runs
from a fresh clone; `seeds-all` adds the seed files of the real packages, whose corpora `bash
.ci/fetch_corpora.sh` fetches. A single-call eval asks each set's single-call blueprints and
leaves its plans out (one call cannot answer a plan; it says how many), an agent plays them all:
the same blueprints, counted two ways. The counts in `SEED_SETS` are what the help text says; a
test reads the files and checks them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from codesearch_core import config
from codesearch_core.corpora.blueprints import read_blueprints_jsonl
from codesearch_core.errors import InputFileError
from codesearch_core.models import Blueprint

SEEDS: Final = "seeds"
SEEDS_ALL: Final = "seeds-all"

#: Each set's name and what it holds: (blueprints, of them single-call, plans), and why.
SEED_SETS: Final[dict[str, tuple[int, int, int, str]]] = {
    SEEDS: (130, 116, 14, "the fixture corpora's seed file, whose corpora ship with the repository"),
    SEEDS_ALL: (219, 187, 32, "every seed file: the fixture corpora's and the real packages' "
                "(their corpora: bash .ci/fetch_corpora.sh)"),
}  # fmt: skip


def describe_seed_set(name: str) -> str:
    """`name` and its counts, as the help text and the docs say them."""
    total, single, plans, why = SEED_SETS[name]
    return f"'{name}': {why}, {total} blueprints ({single} single-call, {plans} plans)"


def seed_files(name: str = SEEDS_ALL) -> list[Path]:
    """The seed files of a set: the fixture corpora's first (`config.seeds_file()`), then, for
    `seeds-all`, the others beside it."""
    if name not in SEED_SETS:
        raise InputFileError(f"no seed set {name!r}: the seed sets are {', '.join(SEED_SETS)}")
    first = config.seeds_file()
    if name == SEEDS:
        return [first]
    return [first, *sorted(p for p in first.parent.glob("*.jsonl") if p != first)]


def load_seed_set(name: str) -> list[Blueprint]:
    """Every blueprint of a seed set, in file order; any bad line is an error."""
    blueprints: list[Blueprint] = []
    for path in seed_files(name):
        found, _ = read_blueprints_jsonl(path)
        blueprints.extend(found)
    return blueprints
