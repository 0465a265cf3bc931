"""The settings of an episode (its limits, its free budget and the reward's weights) and of the
OpenEnv server that serves episodes (`ServerSettings`: where it listens, its token).

Defaults follow Cognition's SWE-grep (at most 4 turns of up to 8 parallel calls). The free budget
is one search turn and its submit turn, with a full turn of parallel calls: searching wide in one
turn is what a code-search agent should learn, so parallel calls are cheap and turns are not.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, Final

from codesearch_core.tools import DEFAULT_TIMEOUT_S

#: `read_file` shows at most this many lines a call.
READ_MAX_LINES: Final = 200
#: A submit names at most this many locations (a blueprint expects far fewer).
SUBMIT_MAX_LOCATIONS: Final = 1000
#: An episode this good counts as a success (the eval's `success_rate`; `PASS_REWARD` of eval runs).
SUCCESS_REWARD: Final = 0.9


@dataclass(frozen=True, slots=True)
class RewardWeights:
    """total = clamp(submit·R_submit + find·R_find + scope·R_scope + turn·R_turns + call·R_calls
    + pcre2_rule·R_pcre2_rule, -1, 1); a perfect episode within the free budget earns exactly 1."""

    submit: float = 0.1
    find: float = 0.6
    scope: float = 0.3
    turn: float = 0.05
    call: float = 0.02
    pcre2_rule: float = 0.5


@dataclass(frozen=True, slots=True)
class GymSettings:
    """One environment's settings (the same for every episode it runs)."""

    max_turns: int = 4
    max_parallel: int = 8
    free_turns: int = 2
    free_calls: int = 8
    timeout_s: float = DEFAULT_TIMEOUT_S
    #: Findings one search keeps: the observation shows 20 and counts the rest, and a search that
    #: would print gigabytes must not hold them all in memory.
    max_findings: int = 2_000
    weights: RewardWeights = RewardWeights()

    def __post_init__(self) -> None:
        if not 1 <= self.max_turns <= 64:
            raise ValueError(f"max_turns must be 1 to 64, got {self.max_turns}")
        if not 1 <= self.max_parallel <= 64:
            raise ValueError(f"max_parallel must be 1 to 64, got {self.max_parallel}")
        if self.free_turns < 0 or self.free_calls < 0:
            raise ValueError("the free budget cannot be negative")
        if not 0 < self.timeout_s <= 600:
            raise ValueError(f"timeout_s must be in (0, 600], got {self.timeout_s}")
        if self.max_findings < 1:
            raise ValueError(f"max_findings must be >= 1, got {self.max_findings}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> GymSettings:
        """The settings `to_dict` wrote (an episode's stored ones); a key it does not know is
        ignored, one it lacks takes the default."""
        known = {f.name for f in fields(GymSettings)} - {"weights"}
        weights = data.get("weights") or {}
        names = {f.name for f in fields(RewardWeights)}
        return GymSettings(
            **{k: v for k, v in data.items() if k in known},
            weights=RewardWeights(**{k: v for k, v in weights.items() if k in names}),
        )


DEFAULT_SETTINGS: Final = GymSettings()


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
