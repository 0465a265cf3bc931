"""Synthesis with the tool runs as tasks on a real local Ray instance gives the threads' drafts."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from codesearch_core.store import Store
from codesearch_core.synthesis import TemplateWriter, ray_map, synthesize

ray = pytest.importorskip("ray", reason="Ray is an optional extra: uv sync --extra ray")
pytestmark = pytest.mark.slow  # starting Ray takes ~10 s on a quiet 2-core machine


def test_ray_tasks_make_the_same_drafts_as_threads(local_ray: Any, tmp_path: Path) -> None:
    on_ray_map = ray_map()
    ran_in: set[int] = set()

    def spying_map(fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        # Each item also says which process measured it: Ray's workers, not this one (a map
        # that quietly ran here would give the same drafts, and pass the check below alone).
        out = list(on_ray_map(lambda item: (os.getpid(), fn(item)), items))
        ran_in.update(pid for pid, _ in out)
        return [result for _, result in out]

    with Store(tmp_path / "threads.duckdb") as store:
        here = synthesize("telemetry", writer=TemplateWriter(), sink=store.drafts)
    with Store(tmp_path / "ray.duckdb") as store:
        on_ray = synthesize(
            "telemetry", writer=TemplateWriter(), sink=store.drafts, map_fn=spying_map
        )
    assert on_ray.counts.kept > 0
    assert on_ray.draft_ids == here.draft_ids
    assert on_ray.counts.to_dict() == here.counts.to_dict()
    assert ran_in and os.getpid() not in ran_in
