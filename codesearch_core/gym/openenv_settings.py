"""The OpenEnv server's settings: where it listens, its token and how many sessions it holds,
and the ASGI guard that checks the token (`BearerToken`; `codesearch mcp` guards its HTTP
transport with it too).

The adapter's own (`gym.openenv_server` serves with them), kept apart from the server so that
the CLI builds and checks them, and the MCP server guards itself, without importing FastAPI and
OpenEnv (seconds to import).
"""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass
from typing import Final

from starlette.types import ASGIApp, Receive, Scope, Send

#: The environment variable `codesearch gym serve` reads its token from (a token on the command
#: line is visible to every user of the machine in `ps`).
TOKEN_ENV: Final = "CODESEARCH_GYM_TOKEN"
#: Sessions one server holds at once: each is a WebSocket and a thread; 64 trainers' rollouts fit.
#: The cap holds for each transport: as many plain-HTTP sessions (`/session/*`) again.
DEFAULT_MAX_SESSIONS: Final = 128
#: How long a plain-HTTP session may go without a request before it expires (a WebSocket session
#: lives as long as its connection): a model's turn between two steps can take minutes.
DEFAULT_SESSION_IDLE_S: Final = 600.0


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
    session_idle_s: float = DEFAULT_SESSION_IDLE_S

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port must be 0 to 65535, got {self.port}")
        if not 1 <= self.max_sessions <= 4096:
            raise ValueError(f"max_sessions must be 1 to 4096, got {self.max_sessions}")
        if not 1 <= self.session_idle_s <= 86_400:
            raise ValueError(
                f"session_idle_s must be 1 to 86400 seconds, got {self.session_idle_s}"
            )
        if self.token != self.token.strip() or any(c in self.token for c in "\r\n\x00"):
            raise ValueError("the token must not hold spaces at its ends, line breaks or NUL")
        if not is_loopback(self.host) and not self.token:
            raise ValueError(
                f"refusing to listen on {self.host} without a token: anyone who reaches it could "
                f"run searches on this machine; give --token or set {TOKEN_ENV}, or listen on "
                "127.0.0.1"
            )


class BearerToken:
    """Every HTTP request and WebSocket handshake must carry `Authorization: Bearer TOKEN`; 401
    otherwise. Plain ASGI, not FastAPI's HTTP middleware, which never sees WebSockets (`/ws`, where
    the episodes are)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self._carries_token(scope):
            await self.app(scope, receive, send)
            return
        body = b'{"detail":"missing or wrong token: send Authorization: Bearer TOKEN"}'
        headers = [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 401, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await receive()  # the handshake's websocket.connect
        if "websocket.http.response" in scope.get("extensions", {}):
            await send({"type": "websocket.http.response.start", "status": 401, "headers": headers})
            await send({"type": "websocket.http.response.body", "body": body})
        else:  # a server without denial responses: refuse the handshake (HTTP 403)
            await send({"type": "websocket.close", "code": 1008})

    def _carries_token(self, scope: Scope) -> bool:
        given = [v for k, v in scope.get("headers", ()) if k == b"authorization"]
        # compare_digest: the time taken does not tell how much of a guess was right.
        return len(given) == 1 and hmac.compare_digest(given[0], self.expected)
