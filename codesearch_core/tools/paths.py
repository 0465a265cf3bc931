"""Keeping every path a tool call (or the corpus browser) names inside its corpus."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from codesearch_core.errors import CorpusError


def resolve_in_corpus(corpus_root: Path, rel: str) -> Path:
    """The real path of `rel` (relative to `corpus_root`), refusing anything that leaves the corpus.

    Refused: absolute paths, `..` components, NUL bytes, and paths whose real location (symlinks
    followed) is outside the corpus root. The path need not exist: a missing file is the tool's
    business (rg reports it), a path outside the corpus is ours.
    """
    if "\x00" in rel:
        raise CorpusError(f"path {rel!r} contains a NUL byte")
    if not rel.strip():
        raise CorpusError("empty path; name a file or directory relative to the corpus root")
    posix = PurePosixPath(rel)
    if posix.is_absolute():
        raise CorpusError(f"path {rel!r} is absolute; give it relative to the corpus root")
    if ".." in posix.parts:
        raise CorpusError(f"path {rel!r} contains `..`; paths must stay inside the corpus")
    root = Path(os.path.realpath(corpus_root))
    if all(part == "." for part in posix.parts):
        return root  # the root itself (most calls search it): no second walk of the links
    target = Path(os.path.realpath(root / rel))
    if not target.is_relative_to(root):
        raise CorpusError(f"path {rel!r} leads outside the corpus (through a symlink) to {target}")
    return target


def corpus_relative(corpus_root: Path, rel: str) -> str:
    """`rel` checked by `resolve_in_corpus` and normalized to the POSIX form tools get (`.` for the root).

    Tools receive the path as written (normalized), not its real location, so the paths they print
    stay the ones the call used.
    """
    resolve_in_corpus(corpus_root, rel)
    parts = [p for p in PurePosixPath(rel).parts if p != "."]
    return "/".join(parts) if parts else "."
