"""The run record: what a training run was made from and what it made, as JSON beside the output
folder (`OUT.run.json`): the mode, the model (as given, its folder and the folder's sha256), the data set and
its card's sha256, the settings, the device, the rows and what was left out, and the resulting
model's sha256. Written atomically; a stopped or failed run writes its status, not a model hash.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

RECORD_SUFFIX: Final = ".run.json"
_CHUNK: Final = 1 << 20


def record_path(out: Path) -> Path:
    """`runs/sft-1` -> `runs/sft-1.run.json`: beside the folder, never inside it (a model folder
    holds only what loading it reads)."""
    return out.with_name(out.name + RECORD_SUFFIX)


def folder_sha256(folder: Path) -> str:
    """One sha256 over a folder: each file's path relative to it and its bytes, in path order,
    so a renamed, added or changed file changes it and where the folder lies does not."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix().encode("utf-8")
        digest.update(len(rel).to_bytes(8, "big") + rel)
        file_digest = hashlib.sha256()
        with path.open("rb") as fh:
            while chunk := fh.read(_CHUNK):
                file_digest.update(chunk)
        digest.update(file_digest.digest())
    return digest.hexdigest()


@dataclass
class RunRecord:
    mode: str
    model: str
    dataset: str
    dataset_card_sha256: str
    settings: dict[str, Any]
    out: str
    status: str = "started"  # started | done | interrupted | failed
    model_path: str = ""
    model_sha256: str = ""
    device: str = ""
    output_sha256: str = ""
    rows: dict[str, Any] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    started: str = ""
    finished: str = ""
    seconds: float = 0.0
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunRecord:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


def write_record(path: Path, record: RunRecord) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(record.to_dict(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_record(path: Path) -> RunRecord:
    return RunRecord.from_dict(json.loads(path.read_text(encoding="utf-8")))
