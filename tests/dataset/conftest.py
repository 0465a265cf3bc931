"""Builds of the small recipe, made once per session and copied for a test that changes them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from dataset_support import SMALL

from codesearch_core.dataset import BuildResult, build_dataset, load_recipe


@pytest.fixture(scope="session")
def small_build(tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    return build_dataset(load_recipe(SMALL), tmp_path_factory.mktemp("small") / "ds")


@pytest.fixture
def built_copy(small_build: BuildResult, tmp_path: Path) -> Path:
    """The small build's folder, the test's own copy."""
    return Path(shutil.copytree(small_build.out, tmp_path / "ds"))
