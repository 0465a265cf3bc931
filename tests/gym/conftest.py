"""Tasks on the shipped corpora for the gym's tests (the real seeds, run by the real tools), and
the tiny model the TRL tests train."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from codesearch_core.gym import Task, as_tasks, seed_blueprints
from tests.vllm_support.env import tiny_model_dir


@pytest.fixture(scope="session")
def seed_tasks() -> dict[str, Task]:
    """Every seed whose corpus is here, by blueprint id."""
    return {t.blueprint.id: t for t in as_tasks(seed_blueprints()).tasks}


@pytest.fixture(scope="session")
def single_task(seed_tasks: dict[str, Task]) -> Task:
    """A one-call ripgrep seed with a few expected spans, on a shipped (fixture) corpus."""
    return next(
        t
        for t in seed_tasks.values()
        if t.blueprint.plan is None
        and t.blueprint.corpus == "webshop"
        and t.blueprint.reference_call.name.value == "ripgrep_search"
        and 2 <= len(t.blueprint.expected) <= 10
    )


@pytest.fixture(scope="session")
def plan_task(seed_tasks: dict[str, Task]) -> Task:
    return next(t for t in seed_tasks.values() if t.blueprint.plan is not None)


@pytest.fixture(scope="session")
def long_tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The vLLM tests' tiny Qwen2 with room for 8192 positions (the TRL tests: GRPO, DPO): the
    system prompt and the four tools' schemas are about 2,300 of its tokens (its rotary positions have no weights, so only the
    config changes)."""
    source = tiny_model_dir(tmp_path_factory)
    dest = tmp_path_factory.mktemp("trl") / "tiny-qwen2-8k"
    shutil.copytree(source, dest)
    for name, key in (
        ("config.json", "max_position_embeddings"),
        ("tokenizer_config.json", "model_max_length"),
    ):
        path = dest / name
        data = json.loads(path.read_text())
        data[key] = 8192
        path.write_text(json.dumps(data))
    return dest
