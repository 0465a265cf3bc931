"""Verification as Ray tasks: the same `verify_chunk` as the local pool, on a Ray cluster.

Ray is an optional extra (`pip install 'codesearch-gym-studio[ray]'`), imported only when this path
is used. Every node needs this package and the corpora (see docs/scaling.md): a task carries its
corpus root, and a node where that directory does not exist finds the corpus by name.
"""

from __future__ import annotations

import importlib
import os
import socket
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from typing import Any, Final
from urllib.parse import urlsplit

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
#: Seconds to wait for the head's port before `ray.init` (which retries a dead address for minutes).
PROBE_TIMEOUT_S: Final = 5.0


def import_ray() -> Any:
    """The `ray` module, or an error that says how to install it."""
    try:
        return importlib.import_module("ray")
    except ImportError as err:
        raise CodesearchError(f"Ray is not installed ({err}); {INSTALL_HINT}") from None


def _unreachable(address: str) -> str:
    """Why the head at `host:port` or `ray://host:port` cannot be reached, or "" when it answers
    (or the address names no port to try: `auto`, `local`). `ray.init` would retry a dead address
    for minutes before failing; a TCP connect says so in seconds."""
    parts = urlsplit(address if "://" in address else f"//{address}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError as err:
        return f"not an address ({err})"
    if not host or port is None:
        return ""
    try:
        socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S).close()
    except OSError as err:
        return f"nothing answers at {host}:{port} ({err})"
    return ""


def connect_ray(
    ray: Any, address: str | None, runtime_env: Mapping[str, Any] | None = None
) -> bool:
    """Connect this process to Ray (starting a local instance if there is none to join).

    True when this call connected, so the caller disconnects afterwards (`ray.shutdown()` stops a
    local instance this process started and only detaches from a cluster).
    """
    if ray.is_initialized():
        return False
    where = address or os.environ.get("RAY_ADDRESS") or "a new local instance"
    hint = (
        "Start the cluster first (`ray start --head` on the head node) and pass its address: "
        "--ray auto on a cluster node, --ray ray://HEAD:10001 from outside."
    )
    why = _unreachable(address or os.environ.get("RAY_ADDRESS", ""))
    if why:
        raise CodesearchError(f"cannot connect to Ray at {where}: {why}. {hint}")
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
        raise CodesearchError(f"cannot connect to Ray at {where}: {err}. {hint}") from None
    return True


def submit_lazily(
    ray: Any,
    submit: Callable[[Any], Any],
    items: Iterator[Any],
    *,
    max_in_flight: int,
    should_stop: StopCheck | None = None,
) -> Generator[Any, None, None]:
    """Each item's Ray task (`submit(item)` gives its object ref), at most `max_in_flight` at once,
    so `items` is pulled lazily; each task's result as it completes. `should_stop()` true: no new
    task starts, those in flight finish and are yielded. Closed early, the ones in flight are
    cancelled."""
    in_flight: list[Any] = []
    exhausted = False
    try:
        while True:
            while not exhausted and len(in_flight) < max_in_flight:
                if should_stop is not None and should_stop():
                    exhausted = True
                    break
                item = next(items, None)
                if item is None:
                    exhausted = True
                    break
                in_flight.append(submit(item))
            if not in_flight:
                return
            done, in_flight = ray.wait(in_flight, num_returns=1)
            for ref in done:
                yield ray.get(ref)
    finally:
        for ref in in_flight:
            ray.cancel(ref)


def cluster_cpus(ray: Any) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


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
    started_here = connect_ray(ray, address, runtime_env)
    try:
        remote_chunk = ray.remote(num_cpus=1, max_retries=1)(verify_chunk)
        tracker = ProgressTracker(
            on_progress, len(tasks) if isinstance(tasks, list | tuple) else None
        )
        results = submit_lazily(
            ray,
            remote_chunk.remote,
            chunked(tasks, chunk_size),
            max_in_flight=max_in_flight or 2 * cluster_cpus(ray),
            should_stop=should_stop,
        )
        try:
            for outcomes in results:
                for outcome in outcomes:
                    tracker.add(outcome)
                    yield outcome
        finally:
            results.close()
    finally:
        if started_here:
            ray.shutdown()
