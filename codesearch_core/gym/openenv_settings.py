"""The OpenEnv server's settings: where it listens, its token and how many sessions it holds.

The adapter's own (`gym.openenv_server` serves with them), kept apart from the server so that
the CLI builds and checks them without importing FastAPI and OpenEnv.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Final

#: The environment variable `codesearch gym serve` reads its token from (a token on the command
#: line is visible to every user of the machine in `ps`).
TOKEN_ENV: Final = "CODESEARCH_GYM_TOKEN"
#: Sessions one server holds at once: each is a WebSocket and a thread; 64 trainers' rollouts fit.
DEFAULT_MAX_SESSIONS: Final = 128


def is_loopback(host: str) -> bool:
    """Whether `host` is reachable from this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name other than localhost may resolve to anything


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """Where the OpenEnv server listens and who may talk to it.

    Episodes run real tools on the machine's corpora, so a server anyone on the network can reach
    needs a token: a host other than loopback is refused without one. With a token, every request
    (HTTP and WebSocket) must carry it as `Authorization: Bearer TOKEN`.
    """

    host: str = "127.0.0.1"
    port: int = 8000
    token: str = ""
    max_sessions: int = DEFAULT_MAX_SESSIONS

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port must be 0 to 65535, got {self.port}")
        if not 1 <= self.max_sessions <= 4096:
            raise ValueError(f"max_sessions must be 1 to 4096, got {self.max_sessions}")
        if self.token != self.token.strip() or any(c in self.token for c in "\r\n\x00"):
            raise ValueError("the token must not hold spaces at its ends, line breaks or NUL")
        if not is_loopback(self.host) and not self.token:
            raise ValueError(
                f"refusing to listen on {self.host} without a token: anyone who reaches it could "
                f"run searches on this machine; give --token or set {TOKEN_ENV}, or listen on "
                "127.0.0.1"
            )
