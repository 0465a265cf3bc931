"""Timers for the hot loops (feature joins, scoring)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from pipeline.utils.log import get_logger

log = get_logger(__name__)


class Stopwatch:
    """Accumulates wall time over several laps."""

    def __init__(self) -> None:
        self.total = 0.0
        self.laps = 0
        self._started: float | None = None

    def start(self) -> None:
        self._started = time.perf_counter()

    def stop(self) -> float:
        if self._started is None:
            raise RuntimeError("stopwatch was not started")
        elapsed = time.perf_counter() - self._started
        self.total += elapsed
        self.laps += 1
        self._started = None
        return elapsed

    def mean_us(self) -> float:
        return self.total / self.laps * 1e6 if self.laps else 0.0

    def summary(self) -> str:
        # ASCII "us" on purpose: this ends up in a CSV header read by old tooling.
        return f"laps={self.laps} mean={self.mean_us():.1f}us"


@contextmanager
def timed(label: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        elapsed = time.perf_counter() - started
        log.debug("%s took %.0f μs", label, elapsed * 1e6)


def per_item_us(total_s: float, items: int) -> str:
    if not items:
        return "0us"
    return f"{total_s / items * 1e6:.2f} μs/item"
