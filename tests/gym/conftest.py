"""Tasks on the shipped corpora for the gym's tests (the real seeds, run by the real tools)."""

from __future__ import annotations

import pytest

from codesearch_core.gym import Task, as_tasks, seed_blueprints


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
