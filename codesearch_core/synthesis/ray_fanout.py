"""Synthesis on a Ray cluster: each batch's reference runs and re-runs (the tool runs) as Ray
tasks.

`synthesize(..., map_fn=ray_map(...))`: the mining passes, the shared baseline passes, intents,
de-duplication and the store stay in this process; the candidates of a batch are measured, and
their targets verified, one Ray task each, wherever the cluster has room. Every node needs this
package and the corpora under the same `CODESEARCH_CORPORA` (a task names its corpus; see
docs/scaling.md). Ray is an optional extra, imported only here.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from codesearch_core.errors import CodesearchError
from codesearch_core.synthesis.pipeline import MapFn


def _apply(fn: Callable[[Any], Any], item: Any) -> Any:
    return fn(item)


def ray_map(address: str | None = None) -> MapFn:
    """A `map_fn` running each item as a Ray task; connects (or starts a local Ray) on first use.
    `address`: as `codesearch verify --ray` (None: `$RAY_ADDRESS` or a new local instance)."""
    try:
        ray = importlib.import_module("ray")
    except ImportError as err:
        raise CodesearchError(
            f"Ray is not installed ({err}); install the extra: uv sync --extra ray"
        ) from None
    remote: Any = None

    def map_fn(fn: Callable[[Any], Any], items: Sequence[Any]) -> Iterable[Any]:
        nonlocal remote
        if not ray.is_initialized():
            local = address is None and not os.environ.get("RAY_ADDRESS")
            ray.init(address=address, **({"include_dashboard": False} if local else {}))
        if remote is None:
            remote = ray.remote(_apply)
        # Results in the items' order, as `map` gives them: the pipeline's counts follow it.
        return list(ray.get([remote.remote(fn, item) for item in items]))

    return map_fn
