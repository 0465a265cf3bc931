"""The one progress line of the long commands (`propose`, `verify`, `corpus add`, `synthesize`):
tqdm's bar on stderr, with the count, the rate and the time left, and the command's own figures
after it. Silent when stderr is not a terminal: a pipe, a log file or CI gets the command's
summary only, not hundreds of redrawn lines. tqdm is imported when a bar is drawn, not before:
importing this module (every long command's module does) costs nothing, and neither does a
progress line on a pipe.

    with Progress("verify", total=1000, unit="calls") as progress:
        progress.update(120, errors=7)
"""

from __future__ import annotations

import os
import sys
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TextIO

if TYPE_CHECKING:
    from tqdm import tqdm


class Progress:
    """A progress line (module docstring). `total=None` counts without a bar or time left."""

    def __init__(
        self,
        label: str,
        *,
        total: int | None = None,
        unit: str = "it",
        stream: TextIO | None = None,
    ) -> None:
        out = stream or sys.stderr
        self._done = 0
        self._bar: tqdm[Any] | None = None
        if not _is_terminal(out):
            return
        from tqdm import tqdm

        # A terminal that says it has no columns (a bare pseudo-terminal, some CI runners) would get
        # nothing drawn (tqdm reads 0 rows as no room): it gets 80 columns and 24 rows instead.
        sized = _columns(out) > 0
        self._bar = tqdm(
            total=total,
            desc=label,
            unit=f" {unit}",  # "12 calls", not "12calls"
            file=out,
            dynamic_ncols=sized,
            ncols=None if sized else 80,
            nrows=None if sized else 24,
            mininterval=0.1,
            leave=True,
        )

    @property
    def enabled(self) -> bool:
        return self._bar is not None

    @property
    def done(self) -> int:
        return self._done

    def update(self, done: int, *, total: int | None = None, **figures: Any) -> None:
        """Move to `done` (a total, not a step); `total` replaces the total (an import counts
        lines, not blueprints); `figures` are shown after the bar (`errors=7`)."""
        self._done = done
        bar = self._bar
        if bar is None:
            return
        if total is not None and total != bar.total:
            bar.total = total
        if figures:
            bar.set_postfix(figures, refresh=False)
        bar.update(done - bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def _columns(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError):
        return 0


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a stream without a terminal, or a closed one
        return False
