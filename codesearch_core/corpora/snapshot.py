"""Pinning a corpus by content: its manifest, its snapshot id, and checking a folder against them.

A corpus's manifest (`.codesearch-manifest.json` at its root, hidden like every dot-file, so
neither tool searches it) lists every regular file of the folder with its size and sha256, where
the corpus came from and when. The **snapshot id** is the sha256 of the file list alone (path,
size, sha256; sorted): the same bytes give the same id wherever they came from, and any added,
removed or changed byte gives another. Blueprints and runs record the id they were made on, so a
finding computed on other bytes is known to be stale (`codesearch verify --stale`).

Everything is hashed, hidden files included: the tools skip hidden files today, but a file that
is in the folder is part of what was pinned. A symlink is never part of a corpus (it may point
anywhere): one found in a pinned folder is reported as a change.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from codesearch_core.errors import CorpusError

MANIFEST_NAME: Final = ".codesearch-manifest.json"
MANIFEST_FORMAT: Final = 1
#: A short form of the id for tables and messages (like git's short hashes).
SHORT_ID_CHARS: Final = 12


@dataclass(frozen=True, slots=True)
class FileEntry:
    path: str  # relative, POSIX
    size: int
    sha256: str
    #: When the file was hashed (not part of the snapshot id): a check re-hashes only files whose
    #: size or mtime changed since, as git's index does; `corpus check --full` hashes them all.
    mtime_ns: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class Manifest:
    files: tuple[FileEntry, ...]
    source: str
    created_at: str  # ISO 8601, UTC
    snapshot_id: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "snapshot_id", snapshot_id_of(self.files))

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def to_json(self) -> str:
        return json.dumps(
            {
                "format": MANIFEST_FORMAT,
                "snapshot_id": self.snapshot_id,
                "source": self.source,
                "created_at": self.created_at,
                "files": [[f.path, f.size, f.sha256, f.mtime_ns] for f in self.files],
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )


def snapshot_id_of(files: tuple[FileEntry, ...]) -> str:
    """The id of a file list: sha256 over `path NUL size NUL sha256 LF`, sorted by path bytes."""
    h = hashlib.sha256()
    for f in sorted(files, key=lambda e: e.path.encode("utf-8", "surrogateescape")):
        h.update(f.path.encode("utf-8", "surrogateescape"))
        h.update(b"\0%d\0" % f.size)
        h.update(f.sha256.encode("ascii"))
        h.update(b"\n")
    return h.hexdigest()


def short_id(snapshot_id: str | None) -> str:
    return snapshot_id[:SHORT_ID_CHARS] if snapshot_id else "unpinned"


def _hash_file(path: Path) -> tuple[int, str]:
    with path.open("rb") as fh:
        digest = hashlib.file_digest(fh, "sha256")
        return fh.tell(), digest.hexdigest()


@dataclass(frozen=True, slots=True)
class _Walk:
    files: dict[str, os.stat_result]
    symlinks: tuple[str, ...]
    others: tuple[str, ...]  # sockets, fifos, devices: never corpus files


def _walk(root: Path) -> _Walk:
    files: dict[str, os.stat_result] = {}
    symlinks: list[str] = []
    others: list[str] = []
    stack = [("", str(root))]
    while stack:
        prefix, folder = stack.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                rel = prefix + entry.name  # string joins: pathlib costs ~10 us a file
                if entry.is_symlink():
                    symlinks.append(rel)
                elif entry.is_dir(follow_symlinks=False):
                    stack.append((rel + "/", entry.path))
                elif entry.is_file(follow_symlinks=False):
                    if rel != MANIFEST_NAME:
                        files[rel] = entry.stat(follow_symlinks=False)
                else:
                    others.append(rel)
    return _Walk(files, tuple(sorted(symlinks)), tuple(sorted(others)))


def hash_folder(root: Path, *, progress: Any = None) -> tuple[FileEntry, ...]:
    """Every regular file under `root` (the manifest itself excepted), hashed.

    `progress`, when given, is called as `progress(done_files, total_files)` while hashing.
    CorpusError when the folder holds a symlink or a special file: a corpus is plain files.
    """
    walk = _walk(root)
    if walk.symlinks or walk.others:
        odd = [*walk.symlinks, *walk.others]
        raise CorpusError(
            f"{root} holds {len(odd)} symlink(s) or special file(s) (e.g. {odd[0]!r}); a corpus "
            "is plain files only: a symlink may point outside it"
        )
    return _hash_entries(root, walk.files, progress)


def _hash_entries(
    root: Path,
    stats: dict[str, os.stat_result],
    progress: Any,
    known: dict[str, FileEntry] | None = None,
) -> tuple[FileEntry, ...]:
    """Hash the files in `stats`; a file whose size and mtime match its `known` entry keeps that
    entry's hash instead."""
    out: list[FileEntry] = []
    rels = sorted(stats)
    for i, rel in enumerate(rels):
        st = stats[rel]
        old = known.get(rel) if known else None
        if (
            old is not None
            and old.mtime_ns
            and (old.size, old.mtime_ns)
            == (
                st.st_size,
                st.st_mtime_ns,
            )
        ):
            out.append(old)
        else:
            size, digest = _hash_file(root / rel)
            out.append(FileEntry(rel, size, digest, st.st_mtime_ns))
        if progress is not None and (i % 64 == 0 or i + 1 == len(rels)):
            progress(i + 1, len(rels))
    return tuple(out)


def now_iso() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def write_manifest(root: Path, source: str, *, progress: Any = None) -> Manifest:
    """Hash `root` and write its manifest (atomically: a temp file renamed over the old one)."""
    manifest = Manifest(hash_folder(root, progress=progress), source, now_iso())
    target = root / MANIFEST_NAME
    tmp = root / f"{MANIFEST_NAME}.tmp-{os.getpid()}"
    tmp.write_text(manifest.to_json(), encoding="utf-8")
    os.replace(tmp, target)
    _CACHE.forget(root)
    return manifest


def read_manifest(root: Path) -> Manifest | None:
    """The corpus's manifest; None when it has none (an unpinned folder)."""
    path = root / MANIFEST_NAME
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        data = json.loads(raw)
        files = tuple(
            FileEntry(str(e[0]), int(e[1]), str(e[2]), int(e[3]) if len(e) > 3 else 0)
            for e in data["files"]
        )
        manifest = Manifest(files, str(data["source"]), str(data["created_at"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise CorpusError(
            f"the manifest {path} is damaged ({exc}); `codesearch corpus pin {root.name}` "
            "writes a new one from the folder as it is"
        ) from None
    if data.get("snapshot_id") != manifest.snapshot_id:
        raise CorpusError(
            f"the manifest {path} was edited: its snapshot id does not match its file list; "
            f"`codesearch corpus pin {root.name}` writes a new one from the folder as it is"
        )
    return manifest


@dataclass(frozen=True, slots=True)
class CheckResult:
    """A folder against its manifest. `content_id` is the id of the folder as it is now."""

    name: str
    pinned_id: str | None
    content_id: str
    #: Every regular file of the folder now (hidden ones included), sorted.
    paths: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    not_plain: tuple[str, ...] = ()  # symlinks and special files

    @property
    def ok(self) -> bool:
        return self.pinned_id is not None and not (
            self.changed or self.added or self.removed or self.not_plain
        )

    def lines(self) -> list[str]:
        """What differs, one line per file (for the CLI and the Corpus page)."""
        out = [f"changed  {p}" for p in self.changed]
        out += [f"added    {p}" for p in self.added]
        out += [f"removed  {p}" for p in self.removed]
        out += [f"not a plain file  {p}" for p in self.not_plain]
        return out


class _CheckCache:
    """Check results by the folder's stat signature: hashing is skipped while no file's size,
    mtime or inode changed (git's index makes the same bet). Thread-safe: the app checks from
    several sessions at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_root: dict[Path, tuple[int, CheckResult]] = {}

    def get(self, root: Path, signature: int) -> CheckResult | None:
        with self._lock:
            hit = self._by_root.get(root)
        return hit[1] if hit and hit[0] == signature else None

    def put(self, root: Path, signature: int, result: CheckResult) -> None:
        with self._lock:
            self._by_root[root] = (signature, result)

    def forget(self, root: Path) -> None:
        with self._lock:
            self._by_root.pop(root, None)


_CACHE: Final = _CheckCache()


def _signature(walk: _Walk, manifest_mtime: int) -> int:
    return hash(
        (
            manifest_mtime,
            walk.symlinks,
            walk.others,
            tuple((p, s.st_size, s.st_mtime_ns, s.st_ino) for p, s in sorted(walk.files.items())),
        )
    )


def check_folder(root: Path, *, full: bool = False) -> CheckResult:
    """Compare the folder with its manifest. A file whose size and mtime are the manifest's keeps
    its recorded hash unless `full` (every file hashed); the result is reused while no file's stat
    changed."""
    walk = _walk(root)
    try:
        manifest_mtime = (root / MANIFEST_NAME).stat().st_mtime_ns
    except FileNotFoundError:
        manifest_mtime = -1
    signature = _signature(walk, manifest_mtime)
    cached = None if full else _CACHE.get(root, signature)
    if cached is not None:
        return cached
    manifest = read_manifest(root)
    pinned = {f.path: f for f in manifest.files} if manifest else {}
    entries = _hash_entries(root, walk.files, None, None if full else pinned)
    now = {e.path: e for e in entries}
    content_id = snapshot_id_of(entries)
    not_plain = (*walk.symlinks, *walk.others)
    paths = tuple(sorted(now))
    if manifest is None:
        result = CheckResult(root.name, None, content_id, paths, not_plain=not_plain)
    else:
        result = CheckResult(
            root.name,
            manifest.snapshot_id,
            content_id,
            paths,
            changed=tuple(p for p in paths if p in pinned and now[p] != pinned[p]),
            added=tuple(p for p in paths if p not in pinned),
            removed=tuple(p for p in sorted(pinned) if p not in now),
            not_plain=not_plain,
        )
    _CACHE.put(root, signature, result)
    return result


def pinned_id(root: Path) -> str | None:
    """The snapshot id the corpus's manifest pins (cheap: no hashing), None when unpinned."""
    manifest = read_manifest(root)
    return manifest.snapshot_id if manifest else None
