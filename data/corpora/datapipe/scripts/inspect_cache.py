#!/usr/bin/env python3
"""Print what the local sqlite extract cache holds: scripts/inspect_cache.py [PATH]."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else Path("cache/extracts.db")
    if not path.exists():
        print(f"no cache at {path}", file=sys.stderr)
        return 1
    conn = sqlite3.connect(path)
    rows = conn.execute(
        "SELECT name, ds, length(payload) FROM extracts ORDER BY name, ds"
    ).fetchall()
    for name, ds, size in rows:
        print(f"{name:<20} {ds}  {size:>10,d} bytes")
    conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
