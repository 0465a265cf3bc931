"""The train tests' data set: the small recipe (tests/dataset/small.toml) built once a session."""

from __future__ import annotations

from pathlib import Path

import pytest
from dataset_support import SMALL

from codesearch_core.dataset import build_dataset, load_recipe


@pytest.fixture(scope="session")
def small_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_dataset(load_recipe(SMALL), tmp_path_factory.mktemp("train-data") / "ds").out
