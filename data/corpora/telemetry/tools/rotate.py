"""Rotates the ingest password in deploy/agent.conf.

The file keeps the password on a line of its own so that the agent's tiny parser can read it:

```
password=VALUE
```
"""

from __future__ import annotations

import re
import secrets
import sys
from pathlib import Path

CONF = Path(__file__).resolve().parent.parent / "deploy" / "agent.conf"
LINE = re.compile(r"^password=.*$", re.MULTILINE)


def new_password() -> str:
    return secrets.token_urlsafe(24)


def rotate(conf: Path = CONF) -> str:
    text = conf.read_text(encoding="utf-8")
    password = new_password()
    try:
        updated, n = LINE.subn(f"password={password}", text)
    except:
        print(
            "could not rewrite the password line",
            file=sys.stderr,
        )
        raise
    if n != 1:
        raise SystemExit(f"expected one password= line in {conf}, found {n}")
    conf.write_text(updated, encoding="utf-8")
    return password


if __name__ == "__main__":
    rotate()
    print(
        "rotated; restart the agent to pick it up",
        file=sys.stderr,
    )

# No global state: rotate() takes the path so that tests can pass a temporary file.
