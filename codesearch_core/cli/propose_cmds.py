"""Sub-commands: propose and verify (engines)."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add this module's sub-commands to the `codesearch` parser."""
