"""Shared by tests/weights and tests/cli: a models cache and pin file of the test's own, a small
Hugging Face folder, and a GGUF header written byte by byte (the format's own layout)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest


def isolate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The models cache and the pin file in `tmp_path` (CODESEARCH_MODELS, CODESEARCH_MODEL_PINS)."""
    models, pins = tmp_path / "models", tmp_path / "pins" / "models.json"
    monkeypatch.setenv("CODESEARCH_MODELS", str(models))
    monkeypatch.setenv("CODESEARCH_MODEL_PINS", str(pins))
    return models, pins


def hf_folder(path: Path, weights: bytes = b"\x00\x01weights") -> Path:
    """A folder laid out as a Hugging Face model: config, weights, tokenizer; a hidden cache
    folder that is not part of the model."""
    (path / ".cache").mkdir(parents=True)
    (path / ".cache" / "lock").write_text("x", encoding="utf-8")
    (path / "config.json").write_text(json.dumps({"model_type": "qwen2"}), encoding="utf-8")
    (path / "model.safetensors").write_bytes(weights)
    (path / "tokenizer.json").write_text("{}", encoding="utf-8")
    return path


def _gguf_string(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def gguf_header(path: Path, architecture: str = "qwen2", *, version: int = 3) -> Path:
    """A GGUF file with no tensors whose header holds a number, a string array (as a tokenizer's
    tokens are) and, after them, general.architecture."""
    kv = [
        _gguf_string("general.alignment") + struct.pack("<II", 4, 32),
        _gguf_string("tokenizer.ggml.tokens")
        + struct.pack("<IIQ", 9, 8, 3)
        + b"".join(_gguf_string(t) for t in ("a", "bc", "<|im_end|>")),
        _gguf_string("general.architecture") + struct.pack("<I", 8) + _gguf_string(architecture),
    ]
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", version, 0, len(kv)) + b"".join(kv))
    return path
