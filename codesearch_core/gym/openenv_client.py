"""OpenEnv's client (`EnvClient`, a WebSocket session) typed for the gym's server.

    from codesearch_core.gym.openenv_client import CodeSearchEnvClient
    from codesearch_core.gym.openenv_server import CodeSearchAction

    with CodeSearchEnvClient("http://127.0.0.1:8000").sync() as env:
        first = env.reset(blueprint_id="ledger-…")       # first.observation.messages, .tools
        step = env.step(CodeSearchAction(calls=[{"name": "ripgrep_search", "arguments": {...}}]))
        ...
        last = env.step(CodeSearchAction(calls=[{"name": "submit", "arguments": {...}}]))
        last.reward, last.observation.info["components"]

`token` sends `Authorization: Bearer TOKEN` with the handshake (a server started with a token
refuses a session without it). Each client is one session on the server, so one episode at a time.
"""

from __future__ import annotations

from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from websockets.asyncio.client import connect as ws_connect

from codesearch_core.gym.openenv_server import (
    CodeSearchAction,
    CodeSearchObservation,
    CodeSearchState,
)


class CodeSearchEnvClient(EnvClient[CodeSearchAction, CodeSearchObservation, CodeSearchState]):
    def __init__(self, base_url: str, *, token: str = "", **kwargs: Any) -> None:
        super().__init__(base_url, **kwargs)
        self._token = token

    async def connect(self) -> CodeSearchEnvClient:
        if not self._token:
            await super().connect()
            return self
        if self._ws is not None:
            return self
        # EnvClient.connect takes no headers; this is it with the token's (and without its
        # NO_PROXY juggling: a proxy is never used for this server's URL).
        try:
            self._ws = await ws_connect(
                self._ws_url,
                open_timeout=self._connect_timeout,
                max_size=self._max_message_size,
                additional_headers={"Authorization": f"Bearer {self._token}"},
                proxy=None,
            )
        except Exception as e:
            raise ConnectionError(f"Failed to connect to {self._ws_url}: {e}") from e
        return self

    def _step_payload(self, action: CodeSearchAction) -> dict[str, Any]:
        return {"calls": action.calls}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[CodeSearchObservation]:
        observation = CodeSearchObservation(
            **payload.get("observation", {}),
            done=payload.get("done", False),
            reward=payload.get("reward"),
        )
        return StepResult(observation=observation, reward=observation.reward, done=observation.done)

    def _parse_state(self, payload: dict[str, Any]) -> CodeSearchState:
        return CodeSearchState(**payload)
