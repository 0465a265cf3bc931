"""Shared by every test folder. Test folders mirror `codesearch_core`'s packages (tests/tools/ for
codesearch_core/tools/, ...); the helpers beside this file (store_helpers, app_support, ...) are
importable from all of them because pytest puts this folder on sys.path for its conftest."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def fixtures_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The corpus "fixtures" that `store_helpers.blueprint` names, holding its expected file, in a
    corpora folder of the test's own (CODESEARCH_CORPORA)."""
    root = tmp_path / "corpora"
    (root / "fixtures" / "src").mkdir(parents=True)
    (root / "fixtures" / "src" / "app.py").write_text("handler_1(x)\n" * 10, encoding="utf-8")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(root))
    return root


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real local Ray for the module's tests that fan out over it (verify, synthesis, rollouts),
    shut down after them so that no Ray daemons run beside the rest of the suite. Modules that use
    it skip at import when Ray is absent (an optional extra)."""
    import ray

    if ray.is_initialized():
        ray.shutdown()
    with pytest.MonkeyPatch.context() as patch:
        # Under `uv run pytest`, Ray would zip the checkout and build a fresh venv for its workers
        # (its uv integration, meant for clusters); local workers can use this interpreter as is.
        patch.setattr(
            "ray._private.ray_constants.RAY_ENABLE_UV_RUN_RUNTIME_ENV", False, raising=False
        )
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            logging_level="warning",
            log_to_driver=False,
            _temp_dir=str(tmp_path_factory.mktemp("ray")),
        )
    try:
        yield ray
    finally:
        ray.shutdown()
