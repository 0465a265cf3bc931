"""Proposing into the store in chunks, and probing an OpenAI-compatible server."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from codesearch_core import ingest, studio
from codesearch_core.engines.mutations import MutationEngine
from codesearch_core.errors import EngineError
from codesearch_core.store.core import Store
from codesearch_core.store.types import BlueprintFilters


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "studio.duckdb") as s:
        yield s


@pytest.fixture
def seeded(store: Store) -> Store:
    ingest.ensure_seeded(store)
    return store


def test_proposing_stores_chunk_by_chunk_and_stops_between_chunks(seeded: Store) -> None:
    blueprints = studio.all_blueprints(seeded, BlueprintFilters(corpus="webshop"), limit=1000)
    seen: list[int] = []
    progress = studio.propose_into_store(
        seeded, MutationEngine(), blueprints, n=1, chunk_size=3,
        on_chunk=lambda p: seen.append(p.blueprints_done), should_stop=lambda: len(seen) >= 2,
    )  # fmt: skip
    assert seen == [3, 6] and progress.blueprints_done == 6
    assert seeded.counts().proposals == progress.proposals == progress.new > 0


def test_all_blueprints_pages_through_the_store(seeded: Store) -> None:
    everything = studio.all_blueprints(seeded, BlueprintFilters(), limit=10_000)
    assert len(everything) == seeded.counts().blueprints
    assert len(studio.all_blueprints(seeded, BlueprintFilters(), limit=5)) == 5


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_probing_a_closed_port_says_how_to_start_a_server() -> None:
    with pytest.raises(EngineError, match=r"cannot reach .*`vllm serve"):
        studio.probe_openai_server(f"http://127.0.0.1:{_free_port()}/v1", None, timeout_s=2)


class _Models(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        ok = self.path == "/v1/models" and self.headers.get("Authorization") == "Bearer k"
        body = json.dumps({"data": [{"id": "tiny"}]}).encode()
        self.send_response(200 if ok else 401)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_probing_a_server_lists_its_models_and_names_a_refused_key() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        assert studio.probe_openai_server(url, "k") == ["tiny"]
        with pytest.raises(EngineError, match="refused the API key"):
            studio.probe_openai_server(url, "wrong")
    finally:
        server.shutdown()
        server.server_close()
