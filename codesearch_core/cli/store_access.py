"""How a command opens the store: waiting, with a word on stderr, while the studio holds the file.

The studio lets go of the file after a moment without clicks (`store.IDLE_RELEASE_S`), so a command
run beside it waits that long at most, unless someone is working in it right then.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # DuckDB and pandas load when a command opens the store, not at start-up
    from codesearch_core.store import Store


def _tell(message: str) -> None:
    print(f"{message} (the studio lets go of it when idle)…", file=sys.stderr, flush=True)


def open_store(path: Path | None) -> Store:
    from codesearch_core.store import Store

    return Store(path, on_wait=_tell)
