"""Verification as Ray tasks on a real local Ray instance gives the local pool's results."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest
from verify_support import by_proposal, make_store, seed_proposals, tasks_for

from codesearch_core.models import Blueprint, Proposal
from codesearch_core.verify.pending import verify_pending
from codesearch_core.verify.pool import verify_many

ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install '.[ray]'")
pytestmark = pytest.mark.slow  # starting Ray takes ~10 s on a quiet 2-core machine

from codesearch_core.verify.ray_backend import verify_many_ray  # noqa: E402


@pytest.fixture(scope="module")
def seeds() -> tuple[list[Blueprint], list[Proposal]]:
    return seed_proposals(mutations_per_blueprint=1)


def test_ray_outcomes_equal_the_local_run(
    local_ray: Any, seeds: tuple[list[Blueprint], list[Proposal]]
) -> None:
    tasks = tasks_for(*seeds)
    local = list(verify_many(tasks, workers=1))
    on_ray = list(verify_many_ray(tasks, chunk_size=4))
    assert len(on_ray) == len(tasks)
    assert by_proposal(on_ray) == by_proposal(local)
    assert local_ray.is_initialized()  # a Ray this call did not start is left running


def test_verify_pending_on_ray_records_every_proposal(
    local_ray: Any, tmp_path: Path, seeds: tuple[list[Blueprint], list[Proposal]]
) -> None:
    blueprints, proposals = seeds
    local = by_proposal(list(verify_many(tasks_for(blueprints, proposals), workers=1)))
    with make_store(tmp_path / "s.duckdb", blueprints, proposals) as store:
        report = verify_pending(store, execute=partial(verify_many_ray, chunk_size=4))
        assert report.count == len(proposals)
        assert store.counts().executed == len(proposals)
        for pid, want in local.items():
            item = store.review_item(pid)
            assert item is not None and item.execution is not None
            assert item.execution.findings == want[2]
            assert item.grade == want[6]


def test_cli_verify_ray_uses_the_connected_ray(
    local_ray: Any,
    tmp_path: Path,
    seeds: tuple[list[Blueprint], list[Proposal]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    from codesearch_core.cli import main

    blueprints, proposals = seeds
    path = tmp_path / "s.duckdb"
    make_store(path, blueprints, proposals[:12]).close()
    assert main(["verify", "--db", str(path), "--ray"]) == 0
    assert "verified 12 proposals with Ray" in capsys.readouterr().out
    assert local_ray.is_initialized()  # the test's connection, not the command's: left open
