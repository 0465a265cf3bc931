"""Browsing the corpora under `config.corpora_dir()`: names, files, text, languages.

A corpus is a directory of source files that tool calls run against. Hidden entries (a leading
dot, `.git` included) and symlinks are not part of a corpus as the browser sees it: a symlink may
point outside, and a dot-file is not something a search task should be about.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Final

from codesearch_core import config
from codesearch_core.corpora.snapshot import (
    CheckResult,
    Manifest,
    check_folder,
    read_manifest,
    write_manifest,
)
from codesearch_core.errors import CorpusError
from codesearch_core.tools import check_tools, resolve_in_corpus

BINARY_SNIFF_BYTES: Final = 8192
#: Larger files are refused by `read_file_text`: the browser shows source files, not data dumps.
MAX_READ_BYTES: Final = 4 * 1024 * 1024

#: File extension -> ast-grep language name (`ast-grep run --lang`).
AST_GREP_EXTENSIONS: Final[dict[str, str]] = {
    ".sh": "bash", ".bash": "bash",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hh": "cpp", ".hpp": "cpp", ".hxx": "cpp",
    ".cs": "csharp", ".css": "css", ".dart": "dart", ".ex": "elixir", ".exs": "elixir",
    ".go": "go", ".hs": "haskell", ".hcl": "hcl", ".tf": "hcl", ".html": "html", ".htm": "html",
    ".java": "java",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".json": "json", ".kt": "kotlin", ".kts": "kotlin", ".lua": "lua", ".nix": "nix",
    ".php": "php", ".py": "python", ".pyi": "python", ".rb": "ruby", ".rs": "rust",
    ".scala": "scala", ".sol": "solidity", ".swift": "swift",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".yaml": "yaml", ".yml": "yaml",
}  # fmt: skip

#: Extra names for files ast-grep does not parse, for syntax highlighting only.
_HIGHLIGHT_EXTENSIONS: Final[dict[str, str]] = {
    ".ini": "ini", ".cfg": "ini", ".conf": "ini", ".env": "bash", ".properties": "properties",
    ".toml": "toml", ".md": "markdown", ".markdown": "markdown", ".xml": "xml", ".sql": "sql",
    ".log": "text", ".txt": "text",
}  # fmt: skip
_HIGHLIGHT_NAMES: Final[dict[str, str]] = {"Makefile": "makefile", "Dockerfile": "dockerfile"}


def list_corpora() -> list[str]:
    """Names of the corpora (directories directly under the corpora dir), sorted."""
    root = config.corpora_dir()
    if not root.is_dir():
        return []
    return sorted(
        p.name for p in root.iterdir() if p.is_dir() and not p.is_symlink() and _visible(p.name)
    )


def _visible(name: str) -> bool:
    return not name.startswith(".")


def corpus_root(name: str) -> Path:
    """The directory of corpus `name`; CorpusError for a name that is not a plain corpus name."""
    if not name or "/" in name or "\\" in name or "\x00" in name or not _visible(name):
        raise CorpusError(
            f"{name!r} is not a corpus name: use the directory name of a corpus, without slashes"
        )
    root = config.corpora_dir() / name
    if not root.is_dir():
        known = ", ".join(list_corpora()) or "none"
        raise CorpusError(
            f"unknown corpus {name!r} (known: {known}); corpora live in {config.corpora_dir()}"
        )
    return root


def check_search_environment(corpora: Iterable[str]) -> None:
    """Raise unless tool calls can run here: both tools found (ToolNotFoundError) and every named
    corpus present (CorpusError). Runs made without them would all fail the same way and be
    scored as the calls' failures; a batch of runs (eval, verify, an RL reward) checks first."""
    check_tools()
    missing: list[str] = []
    for name in sorted(set(corpora)):
        try:
            corpus_root(name)
        except CorpusError:
            missing.append(name)
    if missing:
        raise CorpusError(
            f"corpus {', '.join(repr(m) for m in missing)} not found in {config.corpora_dir()} "
            f"(known: {', '.join(list_corpora()) or 'none'}): add it with `codesearch corpus add "
            "NAME --from SOURCE`, or set CODESEARCH_CORPORA to the folder that holds it"
        )


def list_files(name: str) -> list[str]:
    """Every visible regular file of corpus `name`: relative POSIX paths, sorted."""
    root = corpus_root(name)
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        # Pruned in place so os.walk never descends into hidden directories.
        dirnames[:] = [d for d in dirnames if _visible(d)]
        base = Path(dirpath)
        for f in filenames:
            p = base / f
            if _visible(f) and not p.is_symlink() and p.is_file():
                out.append(p.relative_to(root).as_posix())
    return sorted(out)


def _file_bytes(name: str, rel: str, max_bytes: int) -> bytes:
    path = resolve_in_corpus(corpus_root(name), rel)
    if not path.is_file():
        raise CorpusError(f"{rel!r} is not a file in corpus {name!r}")
    size = path.stat().st_size
    if size > max_bytes:
        raise CorpusError(
            f"{rel!r} is too large to show ({size:,} bytes, at most {max_bytes:,}); "
            "open it outside the studio"
        )
    data = path.read_bytes()
    # rg's own test: a NUL in the first buffer makes a file binary (and its walk skips it).
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise CorpusError(
            f"{rel!r} is a binary file ({size:,} bytes): not shown. rg skips binary files when it "
            "walks the corpus, and ast-grep parses only source files"
        )
    return data


def read_file_text(name: str, rel: str, *, max_bytes: int = MAX_READ_BYTES) -> str:
    """The text of one corpus file; CorpusError when refused (too large, binary, outside).

    UTF-8 (a byte-order mark dropped, as rg drops it); a file that is not UTF-8 is read as
    Windows-1252, the usual legacy encoding of Latin-1 sources, one character per byte as rg
    counts columns, so the marks of its findings land on the right characters.
    """
    data = _file_bytes(name, rel, max_bytes)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
    return text.removeprefix("\ufeff")


def text_lines(text: str) -> list[str]:
    """`text`'s lines as rg and ast-grep number them: split at `\n` only (a CRLF line loses its
    `\r`). `str.splitlines` also splits at form feeds, U+2028 and lone `\r`, which would shift
    every line after one away from the line numbers of the findings."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line starts no line
    return [line.removesuffix("\r") for line in lines]


def read_file_lines(name: str, rel: str, *, max_bytes: int = MAX_READ_BYTES) -> list[str]:
    """The lines of one corpus file (`read_file_text`), numbered as the tools number them."""
    return text_lines(read_file_text(name, rel, max_bytes=max_bytes))


#: How much of a file too large to show whole the Corpus page shows (its first lines).
HEAD_BYTES: Final = 1024 * 1024


def read_file_head(name: str, rel: str, *, max_bytes: int = HEAD_BYTES) -> tuple[str, int]:
    """The first whole lines of a file within `max_bytes` (decoded as `read_file_text` does),
    and the file's size: a minified bundle or a data dump is shown in part, with a notice,
    instead of refused. CorpusError for a binary file or a path outside the corpus."""
    path = resolve_in_corpus(corpus_root(name), rel)
    if not path.is_file():
        raise CorpusError(f"{rel!r} is not a file in corpus {name!r}")
    size = path.stat().st_size
    with path.open("rb") as fh:
        data = fh.read(max_bytes)
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise CorpusError(f"{rel!r} is a binary file ({size:,} bytes): not shown")
    if size > len(data) and b"\n" in data:
        data = data[: data.rindex(b"\n") + 1]  # whole lines only
    # A cut inside one minified line may split a UTF-8 character: up to 3 bytes are dropped.
    for cut in range(4 if size > len(data) else 1):
        try:
            text = data[: len(data) - cut].decode("utf-8")
            break
        except UnicodeDecodeError:
            continue
    else:
        text = data.decode("cp1252", errors="replace")
    return text.removeprefix("\ufeff"), size


def file_encoding(name: str, rel: str, *, max_bytes: int = MAX_READ_BYTES) -> str:
    """How `read_file_text` read the file: "UTF-8", "UTF-8 with BOM" or "Windows-1252 (not UTF-8)"."""
    data = _file_bytes(name, rel, max_bytes)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "Windows-1252 (not UTF-8)"
    return "UTF-8 with BOM" if data.startswith(b"\xef\xbb\xbf") else "UTF-8"


def language_for_path(rel: str) -> str | None:
    """The ast-grep language of a file from its extension, or None when ast-grep does not parse it."""
    return AST_GREP_EXTENSIONS.get(PurePosixPath(rel).suffix.lower())


def main_language(files: Iterable[str]) -> str | None:
    """The ast-grep language most of `files` (a corpus's `list_files`) are in, None when ast-grep
    parses none of them: the language a structural search of the corpus starts with."""
    counts = Counter(lang for rel in files if (lang := language_for_path(rel)))
    return counts.most_common(1)[0][0] if counts else None


def highlight_language(rel: str) -> str:
    """A syntax-highlighting name for showing the file (`text` when nothing better is known)."""
    p = PurePosixPath(rel)
    if p.name in _HIGHLIGHT_NAMES:
        return _HIGHLIGHT_NAMES[p.name]
    return language_for_path(rel) or _HIGHLIGHT_EXTENSIONS.get(p.suffix.lower(), "text")


def file_tree(name: str) -> dict[str, Any]:
    """Corpus files as nested dicts: a directory maps names to sub-trees, a file maps to None."""
    tree: dict[str, Any] = {}
    for rel in list_files(name):
        *dirs, leaf = rel.split("/")
        node = tree
        for d in dirs:
            node = node.setdefault(d, {})
        node[leaf] = None
    return tree


@dataclass(frozen=True, slots=True)
class CorpusInfo:
    """What `codesearch corpus list` and the Corpus page show of a corpus."""

    name: str
    snapshot_id: str | None  # None: no manifest (unpinned)
    files: int
    bytes: int
    languages: tuple[tuple[str, int], ...]  # ast-grep language -> files, most first
    source: str
    created_at: str


def corpus_info(name: str) -> CorpusInfo:
    """A corpus's manifest summed up (no hashing); an unpinned corpus is listed from its folder."""
    root = corpus_root(name)
    manifest = read_manifest(root)
    if manifest is not None:
        sizes = {f.path: f.size for f in manifest.files}
        source, created = manifest.source, manifest.created_at
    else:
        sizes = {rel: (root / rel).stat().st_size for rel in list_files(name)}
        source, created = "", ""
    langs = Counter(lang for rel in sizes if (lang := language_for_path(rel)))
    return CorpusInfo(
        name,
        manifest.snapshot_id if manifest else None,
        len(sizes),
        sum(sizes.values()),
        tuple(langs.most_common()),
        source,
        created,
    )


def check_corpus(name: str, *, full: bool = False) -> CheckResult:
    """The corpus folder against its manifest: files whose size or mtime changed are hashed (all
    of them with `full`)."""
    return check_folder(corpus_root(name), full=full)


def visible_files(paths: Iterable[str]) -> list[str]:
    """The files the browser shows of a check's `paths`: no hidden file, none in a hidden folder."""
    return [p for p in paths if not any(part.startswith(".") for part in p.split("/"))]


def current_snapshot(name: str) -> str:
    """The snapshot id of the corpus's files as they are now: what a run records."""
    return check_corpus(name).content_id


def pin_corpus(name: str) -> Manifest:
    """Write a new manifest for the folder as it is; the source recorded before is kept."""
    root = corpus_root(name)
    try:
        old = read_manifest(root)
    except CorpusError:
        old = None
    mode = root.stat().st_mode
    os.chmod(root, mode | stat.S_IWUSR)  # a snapshot's root is read-only
    try:
        return write_manifest(root, old.source if old else f"dir:{root}")
    finally:
        os.chmod(root, mode)
