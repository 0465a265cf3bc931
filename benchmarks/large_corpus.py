"""A large real corpus for benchmarks: the source files of the installed Python packages.

Built once and cached under `benchmarks/.cache/large_corpus/` (gitignored, never committed): the
text source files (Python, stubs, C, JS/TS, JSON, ...) of the venv's site-packages plus the base
interpreter's standard library, about 30k files and 300+ MB. A manifest beside it records what was
copied; delete the directory to rebuild.

    uv run python benchmarks/large_corpus.py      # build (or report) the corpus
"""

from __future__ import annotations

import json
import shutil
import site
import sys
import sysconfig
from pathlib import Path

CACHE_DIR = Path(__file__).resolve().parent / ".cache"
CORPUS_DIR = CACHE_DIR / "large_corpus"
MANIFEST = CACHE_DIR / "large_corpus.json"

SOURCE_SUFFIXES = frozenset(
    {
        ".py", ".pyi", ".pyx", ".pxd", ".c", ".h", ".cc", ".cpp", ".hpp", ".js", ".mjs",
        ".cjs", ".ts", ".tsx", ".json", ".css", ".html", ".md", ".rst", ".toml", ".yaml",
        ".yml", ".rs", ".go", ".java", ".sh", ".txt",
    }
)  # fmt: skip
MAX_FILE_BYTES = 8 * 1024 * 1024


def _sources() -> dict[str, Path]:
    """Named source trees: the venv's site-packages and the base interpreter's stdlib."""
    trees: dict[str, Path] = {}
    for i, sp in enumerate(site.getsitepackages()):
        if Path(sp).is_dir():
            trees[f"site-packages-{i}"] = Path(sp)
    stdlib = Path(sysconfig.get_paths(vars={"base": sys.base_prefix})["stdlib"])
    if stdlib.is_dir():
        trees["stdlib"] = stdlib
    return trees


def build_large_corpus(force: bool = False) -> Path:
    """The corpus directory, built on first use. Returns quickly when the cache is complete."""
    if MANIFEST.is_file() and CORPUS_DIR.is_dir() and not force:
        return CORPUS_DIR
    if CORPUS_DIR.exists():
        shutil.rmtree(CORPUS_DIR)
    files = 0
    total = 0
    for name, root in _sources().items():
        for src in sorted(root.rglob("*")):
            if src.suffix not in SOURCE_SUFFIXES or not src.is_file() or src.is_symlink():
                continue
            rel = src.relative_to(root)
            # The venv's own corpus copy must not be copied into itself.
            if CACHE_DIR in src.parents or any(p.startswith(".") for p in rel.parts):
                continue
            size = src.stat().st_size
            if size > MAX_FILE_BYTES:
                continue
            dest = CORPUS_DIR / name / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
            files += 1
            total += size
    MANIFEST.write_text(
        json.dumps(
            {"files": files, "bytes": total, "sources": {k: str(v) for k, v in _sources().items()}}
        )
    )
    return CORPUS_DIR


def corpus_stats() -> dict[str, int]:
    build_large_corpus()
    data = json.loads(MANIFEST.read_text())
    return {"files": int(data["files"]), "bytes": int(data["bytes"])}


if __name__ == "__main__":
    path = build_large_corpus(force="--force" in sys.argv)
    stats = corpus_stats()
    print(f"{path}: {stats['files']} files, {stats['bytes'] / 1e6:.0f} MB")
