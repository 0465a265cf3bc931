"""The store the issue's "done when" names, built once for the export tests: seed blueprints
(`export_support.SEED_IDS` and a plan), the mutation engine's proposals for them, executed and
graded by the real tools, and no human decision. Every format is exported from it once, with
reference calls, as `codesearch export FMT --include-reference --out F` does."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from export_support import Loader, seed_blueprints

from codesearch_core.engines.mutations import MutationEngine
from codesearch_core.export.records import ExportFormat
from codesearch_core.export.writers import export
from codesearch_core.store.core import Store
from codesearch_core.verify.pending import verify_pending


@pytest.fixture(scope="session")
def seed_exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder with one `<format>.jsonl` per format (and manifests, card, dataset_info.json).

    One store session does it all: a store reopened twice after it was written is refused as
    truncated by the size check at open (DuckDB shortens the file at a checkpoint), a problem of
    `store.connect` that these tests are not about."""
    folder = tmp_path_factory.mktemp("seed_exports")
    blueprints = seed_blueprints()
    with Store(folder.parent / f"{folder.name}.duckdb") as store:
        store.add_blueprints(blueprints)
        store.add_proposals(MutationEngine().propose(blueprints, n=4))
        verify_pending(store, workers=1)
        for fmt in ExportFormat:
            out = folder / f"{fmt.value}.jsonl"
            assert export(store, fmt, out, include_reference=True).rows > 0, fmt.value
    return folder


@pytest.fixture(scope="session")
def hf_load(tmp_path_factory: pytest.TempPathFactory) -> Loader:
    """`datasets.load_dataset("json", data_files=...)`, offline, with a throw-away cache."""
    home = tmp_path_factory.mktemp("hf_home_targets")
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    import datasets

    def load(path: Path) -> Any:
        return datasets.load_dataset(
            "json", data_files=str(path), split="train", cache_dir=str(home / "cache")
        )

    return load
