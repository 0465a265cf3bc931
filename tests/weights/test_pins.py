"""weights.pins: the committed pin file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codesearch_core.errors import ModelError
from codesearch_core.weights.pins import ModelPin, read_pins, write_pin


def test_a_pin_is_added_beside_the_others_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    assert read_pins(path) == {}
    one = ModelPin("one", "pypi:x==1", "a" * 64, "b" * 64, "c" * 64, "x.gguf", "llama")
    two = ModelPin("two", "dir:/m", "d" * 64, "e" * 64)
    write_pin(one, path)
    write_pin(two, path)
    assert read_pins(path) == {"one": one, "two": two}
    # empty fields are not written: the file stays short enough to review in a diff
    assert "archive_sha256" not in json.loads(path.read_text(encoding="utf-8"))["two"]
    assert [p.name for p in tmp_path.iterdir()] == ["models.json"]  # no temporary file left


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("<<<<<<< HEAD", "not the model pins' JSON"),
        ("[]", "an object of name -> pin"),
        ('{"m": {"source": "pypi:x==1"}}', "needs at least source and source_sha256"),
        ('{"m": {"source": "s", "source_sha256": "a", "sha": "b"}}', "unknown field"),
    ],
)
def test_a_broken_pin_file_is_an_error_that_names_it(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "models.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ModelError, match=says) as err:
        read_pins(path)
    assert str(path) in str(err.value)
