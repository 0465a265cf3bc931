"""The shared data types: the hashes that identify calls, blueprints and proposals."""

from __future__ import annotations

import hashlib

from codesearch_core.models import ToolCall, ToolName, sha256_hex


def test_sha256_hex_is_the_digest_of_the_utf8_text() -> None:
    # Stored ids are these hashes: valid text must hash exactly as before.
    assert sha256_hex("café 日本") == hashlib.sha256("café 日本".encode()).hexdigest()


def test_sha256_hex_takes_a_lone_surrogate() -> None:
    # Valid JSON ("\ud800") can carry one into model text; hashing it must not raise.
    digests = {sha256_hex(text) for text in ("a\ud800", "a\ud801", "a\udcff", "a")}
    assert len(digests) == 4 and all(len(d) == 64 for d in digests)
    assert ToolCall(ToolName.RIPGREP, {"pattern": "a\ud800"}).call_hash == sha256_hex(
        '{"arguments":{"pattern":"a\ud800"},"name":"ripgrep_search"}'
    )
