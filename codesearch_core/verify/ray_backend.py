"""Verification as Ray tasks: the same `verify_chunk` as the local pool, on a Ray cluster.

Ray is an optional extra (`pip install 'codesearch-gym-studio[ray]'`), imported only when this path
is used. Every node needs this package and the corpora (see docs/scaling.md): a task carries its
corpus root, and a node where that directory does not exist finds the corpus by name.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from codesearch_core.errors import CodesearchError
from codesearch_core.verify.pool import (
    DEFAULT_CHUNK_SIZE,
    ProgressCallback,
    ProgressTracker,
    StopCheck,
    chunked,
)
from codesearch_core.verify.tasks import VerifyOutcome, VerifyTask, verify_chunk

INSTALL_HINT = (
    "install the extra: pip install 'codesearch-gym-studio[ray]' (or uv sync --extra ray)"
)


def import_ray() -> Any:
    """The `ray` module, or an error that says how to install it."""
    try:
        return importlib.import_module("ray")
    except ImportError as err:
        raise CodesearchError(f"Ray is not installed ({err}); {INSTALL_HINT}") from None


def _connect(ray: Any, address: str | None, runtime_env: Mapping[str, Any] | None) -> bool:
    """Connect this process to Ray (starting a local instance if there is none to join).

    True when this call connected, so the caller disconnects afterwards (`ray.shutdown()` stops a
    local instance this process started and only detaches from a cluster).
    """
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"address": address}
    if address is None and not os.environ.get("RAY_ADDRESS"):
        # A new local instance: no dashboard, quiet start-up. Joining a cluster (or a Ray Client
        # connection) takes none of these.
        kwargs.update(include_dashboard=False, logging_level="warning")
    if runtime_env:
        kwargs["runtime_env"] = dict(runtime_env)
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError) as err:
        where = address or os.environ.get("RAY_ADDRESS") or "a new local instance"
        raise CodesearchError(
            f"cannot connect to Ray at {where}: {err}. Start the cluster first "
            "(`ray start --head` on the head node) and pass its address: --ray auto on a "
            "cluster node, --ray ray://HEAD:10001 from outside."
        ) from None
    return True


def verify_many_ray(
    tasks: Iterable[VerifyTask],
    *,
    address: str | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    max_in_flight: int | None = None,
    on_progress: ProgressCallback | None = None,
    should_stop: StopCheck | None = None,
    runtime_env: Mapping[str, Any] | None = None,
) -> Iterator[VerifyOutcome]:
    """Verify `tasks` as Ray tasks of `chunk_size` each; outcomes in completion order.

    `address`: None uses `$RAY_ADDRESS` or starts a local Ray, `"auto"` joins the cluster this machine
    belongs to, `"ray://HEAD:10001"` connects as a Ray Client. If this process is already connected,
    that connection is used as is and left open; otherwise the connection made here is closed when
    the iterator finishes or is closed. At most `max_in_flight`
    chunks (default: two per CPU in the cluster) are outstanding, so tasks are pulled lazily.
    """
    ray = import_ray()
    started_here = _connect(ray, address, runtime_env)
    in_flight: list[Any] = []
    try:
        if max_in_flight is None:
            cpus = int(ray.cluster_resources().get("CPU", 1))
            max_in_flight = 2 * max(1, cpus)
        remote_chunk = ray.remote(num_cpus=1, max_retries=1)(verify_chunk)
        tracker = ProgressTracker(
            on_progress, len(tasks) if isinstance(tasks, list | tuple) else None
        )
        chunks = chunked(tasks, chunk_size)
        exhausted = False
        while True:
            while not exhausted and len(in_flight) < max_in_flight:
                if should_stop is not None and should_stop():
                    exhausted = True
                    break
                chunk = next(chunks, None)
                if chunk is None:
                    exhausted = True
                    break
                in_flight.append(remote_chunk.remote(chunk))
            if not in_flight:
                return
            done, in_flight = ray.wait(in_flight, num_returns=1)
            for ref in done:
                outcomes: list[VerifyOutcome] = ray.get(ref)
                for outcome in outcomes:
                    tracker.add(outcome)
                    yield outcome
    finally:
        for ref in in_flight:
            ray.cancel(ref)
        if started_here:
            ray.shutdown()
