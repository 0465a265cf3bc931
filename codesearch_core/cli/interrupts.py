"""Ctrl-C for long commands that keep what they finished (synthesize, rollouts): the first one asks
the work to stop at its next boundary and the report still prints; the second quits at once.
With a vLLM engine running, the engine's stop path (`engines.engine_stop_path`) has the signals
instead: its next boundary can be a whole batch of generation away."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def stop_on_ctrl_c(what: str) -> Iterator[threading.Event]:
    """While open, a first Ctrl-C sets the event and says `stopping after {what} (Ctrl-C again to
    quit now)`; a second one raises KeyboardInterrupt as usual. Without this, KeyboardInterrupt
    would unwind through the work and take its report with it."""
    asked = threading.Event()
    if threading.current_thread() is not threading.main_thread() or _engine_stop_path_open():
        # signal handlers can only be set from the main thread; and with a model engine running,
        # the engine's stop path has the signals: a stop there must not wait for a whole batch
        yield asked
        return

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        if asked.is_set():
            signal.default_int_handler(signum, frame)
        asked.set()
        print(f"stopping after {what} (Ctrl-C again to quit now)", file=sys.stderr)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield asked
    finally:
        signal.signal(signal.SIGINT, previous)


def _engine_stop_path_open() -> bool:
    from codesearch_core.engines import stop_path_open  # the package never imports vLLM

    return stop_path_open()
