"""Logging helpers: one logger per module, durations in human units."""

from __future__ import annotations

import logging
import os
import sys

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def get_logger(name: str) -> logging.Logger:
    """Return the module logger; configure the root handler once.

    Library code logs through this instead of print(): job output is collected from the
    handlers, and stray prints end up interleaved with the progress bars.
    """
    root = logging.getLogger("pipeline")
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(_FORMAT))
        root.addHandler(handler)
        root.setLevel(os.environ.get("DATAPIPE_LOG_LEVEL", "INFO"))
    return root.getChild(name.removeprefix("pipeline."))


def format_duration(seconds: float) -> str:
    """Format a duration for a log line: 1.2 s, 35 ms or 870 µs."""
    if seconds >= 1:
        return f"{seconds:.1f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.0f} ms"
    return f"{seconds * 1e6:.0f} µs"


def format_rate(rows: int, seconds: float) -> str:
    """Rows per second, or the time per row when that reads better."""
    if seconds <= 0 or rows <= 0:
        return "n/a"
    per_row = seconds / rows
    if per_row < 1e-3:
        return f"{per_row * 1e6:.1f} µs/row"
    return f"{rows / seconds:,.0f} rows/s"
