"""Keeping every path a tool call (or the corpus browser) names inside its corpus.

Plain string operations rather than pathlib: every tool call goes through here before its process
starts, and on a 5 ms search pathlib's parsing was a measurable share of the runner's overhead.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from codesearch_core.errors import CorpusError


def resolve_in_corpus(corpus_root: Path, rel: str) -> Path:
    """The real path of `rel` (relative to `corpus_root`), refusing anything that leaves the corpus.

    Refused: absolute paths, `..` components, NUL bytes, and paths whose real location (symlinks
    followed) is outside the corpus root. The path need not exist: a missing file is the tool's
    business (rg reports it), a path outside the corpus is ours.
    """
    return Path(_resolve(corpus_root, rel, _parts(rel)))


def corpus_relative(corpus_root: Path, rel: str) -> str:
    """`rel` checked by `resolve_in_corpus` and normalized to the POSIX form tools get (`.` for the root).

    Tools receive the path as written (normalized), not its real location, so the paths they print
    stay the ones the call used.
    """
    parts = _parts(rel)
    if not parts:
        return "."  # the root itself (most calls search it): nothing to resolve
    if _has_symlink(corpus_root, parts):
        _resolve(corpus_root, rel, parts)
    return "/".join(parts)


def _parts(rel: str) -> list[str]:
    """`rel`'s components without empty and `.` ones (as PurePosixPath reads them), checked."""
    if "\x00" in rel:
        raise CorpusError(f"path {rel!r} contains a NUL byte")
    if not rel.strip():
        raise CorpusError("empty path; name a file or directory relative to the corpus root")
    if rel.startswith("/"):
        raise CorpusError(f"path {rel!r} is absolute; give it relative to the corpus root")
    parts = [p for p in rel.split("/") if p and p != "."]
    if ".." in parts:
        raise CorpusError(f"path {rel!r} contains `..`; paths must stay inside the corpus")
    return parts


def _has_symlink(corpus_root: Path, parts: list[str]) -> bool:
    """Whether a component of `parts` under the root is a symbolic link.

    Without `..` and without a link below the root, the path stays inside the root wherever the
    root itself lies, so only a link needs the full `realpath` walk (a stat of every component of
    the root's own path too). A missing component ends the walk: nothing under it exists.
    """
    path = os.fspath(corpus_root)
    for part in parts:
        path = f"{path}/{part}"
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return True
        except OSError:
            return False
    return False


def _resolve(corpus_root: Path, rel: str, parts: list[str]) -> str:
    root = os.path.realpath(corpus_root)
    if not parts:
        return root  # no second walk of the links
    target = os.path.realpath(os.path.join(root, *parts))
    if target != root and not target.startswith(root.rstrip("/") + "/"):
        raise CorpusError(f"path {rel!r} leads outside the corpus (through a symlink) to {target}")
    return target
