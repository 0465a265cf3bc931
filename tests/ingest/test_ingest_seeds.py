"""First start: the shipped seeds load into an empty store, once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codesearch_core.ingest.seeds import ensure_seeded, seed_blueprints
from codesearch_core.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "studio.duckdb") as s:
        yield s


def test_first_start_loads_the_seeds_once(store: Store) -> None:
    report = ensure_seeded(store)
    assert report is not None and report.new == len(seed_blueprints()) >= 30
    assert ensure_seeded(store) is None
    assert store.counts().blueprints == report.new
