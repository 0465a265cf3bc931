"""The bytes of a model: sha256 of a file, the content id of a folder, its manifest, and reading
a GGUF's header (its architecture) without torch.

A folder's content id is the sha256 of its file list (`path NUL size NUL sha256 LF`, sorted by
path), the corpora's snapshot id: the same files give the same id wherever they are. The manifest
(`.codesearch-model.json`) is left out of it.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

from codesearch_core.errors import ModelError

MANIFEST_NAME: Final = ".codesearch-model.json"
_CHUNK: Final = 1 << 20


def file_sha256(path: Path, on_bytes: Callable[[int], None] | None = None) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
            if on_bytes is not None:
                on_bytes(len(chunk))
    return h.hexdigest()


def copy_hashing(src: IO[bytes], dest: Path) -> str:
    """Copy a stream into a new file, the sha256 of what was written."""
    h = hashlib.sha256()
    with dest.open("xb") as out:
        while chunk := src.read(_CHUNK):
            h.update(chunk)
            out.write(chunk)
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class FileEntry:
    path: str  # relative, POSIX
    size: int
    sha256: str


def folder_files(root: Path, *, follow_links: bool = False) -> list[str]:
    """The folder's regular files, relative, sorted; hidden entries (the manifest, `.cache/`)
    are not part of a model, nor are symlinks, unless `follow_links` (a source folder: the
    Hugging Face cache's snapshots are links to its blobs)."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        base = Path(dirpath)
        for f in filenames:
            p = base / f
            if not f.startswith(".") and (follow_links or not p.is_symlink()) and p.is_file():
                out.append(p.relative_to(root).as_posix())
    return sorted(out)


def hash_folder(root: Path) -> list[FileEntry]:
    return [
        FileEntry(rel, (root / rel).stat().st_size, file_sha256(root / rel))
        for rel in folder_files(root)
    ]


def content_id(entries: list[FileEntry]) -> str:
    h = hashlib.sha256()
    for e in sorted(entries, key=lambda e: e.path.encode("utf-8")):
        h.update(f"{e.path}\0{e.size}\0{e.sha256}\n".encode())
    return h.hexdigest()


def write_manifest(root: Path, entries: list[FileEntry], about: dict[str, str]) -> None:
    data = {**about, "files": [[e.path, e.size, e.sha256] for e in entries]}
    (root / MANIFEST_NAME).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def read_manifest(root: Path) -> tuple[dict[str, str], list[FileEntry]] | None:
    """The manifest's fields and file list; None when the folder has none or it is unreadable
    (a folder that cannot be trusted is fetched again, not read)."""
    try:
        data = json.loads((root / MANIFEST_NAME).read_text(encoding="utf-8"))
        entries = [FileEntry(str(p), int(s), str(h)) for p, s, h in data.pop("files")]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return {str(k): str(v) for k, v in data.items()}, entries


# --- GGUF ---------------------------------------------------------------------------------------

# GGUF value types (ggml's gguf.h): fixed sizes, 8 a string, 9 an array.
_FIXED: Final = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING: Final = 8
_ARRAY: Final = 9
_MAX_KEYS: Final = 100_000


def _read(fh: IO[bytes], n: int, path: Path) -> bytes:
    data = fh.read(n)
    if len(data) != n:
        raise ModelError(f"{path} is not a whole GGUF file: it ends inside its header")
    return data


def _string(fh: IO[bytes], path: Path) -> bytes:
    (n,) = struct.unpack("<Q", _read(fh, 8, path))
    if n > 1 << 24:
        raise ModelError(f"{path}: a GGUF header string of {n:,} bytes: not a GGUF file")
    return _read(fh, n, path)


def _skip_value(fh: IO[bytes], vtype: int, path: Path) -> None:
    if vtype in _FIXED:
        fh.seek(_FIXED[vtype], os.SEEK_CUR)
    elif vtype == _STRING:
        _string(fh, path)
    elif vtype == _ARRAY:
        item, count = struct.unpack("<IQ", _read(fh, 12, path))
        if item in _FIXED:
            fh.seek(_FIXED[item] * count, os.SEEK_CUR)
        else:
            for _ in range(count):
                _skip_value(fh, item, path)
    else:
        raise ModelError(f"{path}: GGUF value type {vtype} is unknown: not a GGUF file")


def gguf_metadata(
    path: Path, keys: frozenset[str] = frozenset({"general.architecture"})
) -> dict[str, Any]:
    """The string values of `keys` in a GGUF file's header (read with the standard library, so a
    file that is not a GGUF is refused before an environment with torch is started)."""
    found: dict[str, Any] = {}
    try:
        with path.open("rb") as fh:
            if fh.read(4) != b"GGUF":
                raise ModelError(f"{path} is not a GGUF file (it does not start with 'GGUF')")
            version, _tensors, n_kv = struct.unpack("<IQQ", _read(fh, 20, path))
            if version not in (2, 3) or n_kv > _MAX_KEYS:
                raise ModelError(
                    f"{path}: GGUF version {version} is not one this reader knows (2, 3)"
                )
            for _ in range(n_kv):
                key = _string(fh, path).decode("utf-8", "replace")
                (vtype,) = struct.unpack("<I", _read(fh, 4, path))
                if key in keys and vtype == _STRING:
                    found[key] = _string(fh, path).decode("utf-8", "replace")
                    if found.keys() == keys:
                        break
                else:
                    _skip_value(fh, vtype, path)
    except OSError as exc:
        raise ModelError(f"cannot read {path}: {exc.strerror or exc}") from None
    return found
