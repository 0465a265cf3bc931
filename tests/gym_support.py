"""A scripted agent behind an OpenAI-compatible chat server on localhost, for the tests of the
gym's model ways in (the chat policy, verifiers): a stand-in for a model, never for the gym.

For each seed it replays the reference policy's own episode (played once, in the real gym):
at the k-th assistant turn of a conversation it answers the k-th turn's calls as `tool_calls`
(arguments as JSON text, as vLLM's tool parser writes them). `mode="malformed"` answers one call
with arguments that are not JSON first, as a weak model might; `mode="chatty"` answers text with no
call at all.

`slow_agent` scripts a weaker agent's episode (more turns, part of the answer) for the review
walks that set episodes side by side and label their steps.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from codesearch_core.corpora import corpus_root
from codesearch_core.gym import Episode, ReferencePolicy, Task, seed_blueprints
from codesearch_core.models import Blueprint


def webshop_task() -> Blueprint:
    """A single-search seed of the webshop corpus with several expected spans."""
    return next(
        b for b in seed_blueprints() if b.corpus == "webshop" and b.plan is None
        and len(b.expected) >= 2
    )  # fmt: skip


def slow_agent(bp: Blueprint, *, searches: int = 1) -> dict[str, Any]:
    """A slower agent than the reference on `bp`, played in the real gym: its search, a read of
    the first expected span's file up to it, the search `searches - 1` times again, then a submit
    of that one span (of several): `searches + 2` turns. The trajectory (`to_dict`)."""
    episode = Episode(bp, corpus_root(bp.corpus))
    search = {"name": bp.reference_call.name.value, "arguments": bp.reference_call.arguments}
    first = bp.expected[0]
    episode.step([search])
    episode.step([{"name": "read_file", "arguments": {"path": first.path, "start_line": 1,
                                                      "end_line": first.end_line}}])  # fmt: skip
    for _ in range(searches - 1):
        episode.step([search])
    episode.step([{"name": "submit", "arguments": {"locations": [first.to_dict()]}}])
    return episode.result().to_dict()


def reference_turns(task: Task) -> list[list[dict[str, Any]]]:
    """The reference policy's turns on `task`, each a list of `{"name", "arguments"}`."""
    episode = Episode(task.blueprint, task.corpus_root)
    ReferencePolicy().play(episode)
    trajectory = episode.stop().to_dict()
    return [
        [{"name": c["name"], "arguments": c["arguments"]} for c in turn]
        for turn in trajectory["turns"]
    ]


class AgentServer:
    def __init__(
        self, tasks: list[Task], model: str = "scripted-agent", mode: str = "reference"
    ) -> None:
        self.model = model
        self.mode = mode
        self.requests: list[dict[str, Any]] = []
        self._turns = {t.blueprint.intent: reference_turns(t) for t in tasks}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _send(self, body: dict[str, Any], status: int = 200) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send({"object": "list", "data": [{"id": model, "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                self._send(server.answer(body))

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        user = next(str(m.get("content", "")) for m in messages if m["role"] == "user")
        turns = next(t for intent, t in self._turns.items() if intent in user)
        k = sum(m["role"] == "assistant" for m in messages)
        if self.mode == "chatty":
            message: dict[str, Any] = {"role": "assistant", "content": "I would search for it."}
            finish = "stop"
        else:
            calls = turns[min(k, len(turns) - 1)]
            tool_calls = [
                {
                    "id": f"call_{k}_{i}",
                    "type": "function",
                    "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
                }
                for i, c in enumerate(calls)
            ]
            if self.mode == "malformed" and k == 0:
                tool_calls.insert(0, {"id": "call_bad", "type": "function",
                                      "function": {"name": "ripgrep_search", "arguments": "{pattern: oops"}})  # fmt: skip
            message = {"role": "assistant", "content": None, "tool_calls": tool_calls}
            finish = "tool_calls"
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            # The OpenAI schema requires it; verifiers' interception validates it.
            "created": int(time.time()),
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
