"""weights.content: a GGUF's header read without torch, the content id of a folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from weights_support import gguf_header, hf_folder

from codesearch_core.errors import ModelError
from codesearch_core.weights.content import content_id, gguf_metadata, hash_folder


def test_the_architecture_is_read_past_arrays_and_numbers(tmp_path: Path) -> None:
    path = gguf_header(tmp_path / "m.gguf", "llama")
    assert gguf_metadata(path) == {"general.architecture": "llama"}


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"PK\x03\x04 a zip", "is not a GGUF file"),
        (b"GGUF\x03\x00", "ends inside its header"),
        (b"GGUF" + (9).to_bytes(4, "little") + bytes(16), "GGUF version 9"),
    ],
)
def test_a_file_that_is_not_a_whole_gguf_is_refused(
    tmp_path: Path, content: bytes, says: str
) -> None:
    path = tmp_path / "m.gguf"
    path.write_bytes(content)
    with pytest.raises(ModelError, match=says):
        gguf_metadata(path)


def test_the_content_id_is_the_files_not_where_they_are(tmp_path: Path) -> None:
    a = hf_folder(tmp_path / "a")
    b = hf_folder(tmp_path / "b")
    entries = hash_folder(a)
    # hidden entries are not part of a model
    assert [e.path for e in entries] == ["config.json", "model.safetensors", "tokenizer.json"]
    assert content_id(entries) == content_id(hash_folder(b))
    (b / "model.safetensors").write_bytes(b"other")
    assert content_id(entries) != content_id(hash_folder(b))
