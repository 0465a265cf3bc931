"""Adding a corpus: a read-only, pinned snapshot of a folder, a git checkout or a package.

SOURCE is one of:
- a local directory: its files as a checkout of it would have them (`.gitignore` rules apply,
  read with rg's own gitignore matcher; `.git/` is left out);
- `git:PATH[@REV]`, or a directory that is a git work tree: the files git tracks (at REV through
  `git archive`, or in the work tree as it is);
- `pypi:NAME==VERSION`: the sdist, fetched by pip's own `pip download --no-binary NAME`;
- `npm:NAME@VERSION`: the package tarball, fetched by `npm pack`.

The snapshot is built in a staging folder beside the corpora and renamed into place once it is
whole, so a corpus appears complete or not at all (a full disk, a bad archive or Ctrl-C leaves
only the staging folder, which the next `add` sweeps). Symlinks are never copied (one may point
outside the source); an archive member with an absolute path or `..` refuses the whole archive.
Files are made read-only: a corpus is edited on purpose (`chmod`, then `corpus pin`), not by
accident.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Final

from codesearch_core import config
from codesearch_core.corpora.snapshot import MANIFEST_NAME, Manifest, write_manifest
from codesearch_core.errors import CorpusError
from codesearch_core.tools import pid_alive, rg_path

#: The default cap on a corpus's size (CODESEARCH_CORPUS_MAX_BYTES overrides it).
DEFAULT_MAX_BYTES: Final = 2 * 1024**3
FETCH_TIMEOUT_S: Final = 600
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_STAGING_PREFIX: Final = ".staging-"

#: `progress(stage, done, total)`: stage is "fetch", "copy" or "hash"; total 0 when unknown.
Progress = Callable[[str, int, int], None]


def _no_progress(stage: str, done: int, total: int) -> None:
    return None


@dataclass(frozen=True, slots=True)
class AddResult:
    name: str
    root: Path
    manifest: Manifest
    skipped_symlinks: int


def max_corpus_bytes() -> int:
    raw = os.environ.get("CODESEARCH_CORPUS_MAX_BYTES", "").strip()
    if not raw:
        return DEFAULT_MAX_BYTES
    try:
        return max(1, int(raw))
    except ValueError:
        raise CorpusError(
            f"CODESEARCH_CORPUS_MAX_BYTES={raw!r} is not a number of bytes (e.g. 2000000000)"
        ) from None


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise CorpusError(
            f"{name!r} is not a corpus name: letters, digits, '.', '_' and '-', starting with a "
            "letter or digit, at most 64 characters"
        )
    return name


class _Budget:
    """Bytes copied so far against the cap: the snapshot stops at the first byte over it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def take(self, size: int, what: str) -> None:
        self.used += size
        if self.used > self.limit:
            raise CorpusError(
                f"the source is too large: over {self.limit:,} bytes at {what!r} (the cap is "
                "CODESEARCH_CORPUS_MAX_BYTES, or --max-bytes)"
            )


def _run(
    argv: list[str], what: str, cwd: Path | None = None, ok: tuple[int, ...] = (0,)
) -> subprocess.CompletedProcess[bytes]:
    try:
        proc = subprocess.run(
            argv, cwd=cwd, capture_output=True, timeout=FETCH_TIMEOUT_S, check=False
        )
    except FileNotFoundError:
        raise CorpusError(f"{what}: {argv[0]!r} is not installed") from None
    except subprocess.TimeoutExpired:
        raise CorpusError(f"{what}: no answer in {FETCH_TIMEOUT_S} s (no network?)") from None
    if proc.returncode not in ok:
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        # pip and npm print warnings first; their errors say what went wrong.
        errors = [ln for ln in lines if ln.lower().startswith(("error", "npm error", "fatal"))]
        tail = (errors or lines)[-4:]
        raise CorpusError(f"{what} failed (exit {proc.returncode}): " + " | ".join(tail))
    return proc


# --- local folders ------------------------------------------------------------------------------


def _is_git_worktree(path: Path) -> bool:
    proc = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--show-toplevel"],
        capture_output=True,
        check=False,
    )
    return proc.returncode == 0 and Path(proc.stdout.decode().strip()).resolve() == path.resolve()


def _split_nul(data: bytes) -> list[str]:
    return [os.fsdecode(p) for p in data.split(b"\0") if p]


def _folder_files(src: Path, is_git: bool) -> list[str]:
    """The files a checkout of `src` has, relative. A git work tree: what git tracks or would add;
    a plain folder: every file its `.gitignore`s do not exclude (rg applies them outside git
    with --no-require-git; `.ignore`/`.rgignore` are rg's, not a checkout's, and are not read)."""
    if is_git:
        proc = _run(
            ["git", "-C", str(src), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            f"listing the files of {src}",
        )
        return sorted(set(_split_nul(proc.stdout)))
    proc = _run(
        [
            rg_path(), "--files", "--null", "--hidden", "--no-config", "--no-require-git",
            "--no-ignore-dot", "--no-ignore-global", "--no-ignore-parent", "--no-ignore-exclude",
            "--glob", "!.git", ".",
        ],
        f"listing the files of {src}",
        cwd=src,
        ok=(0, 1),  # rg's 1 is "no file": said below, not as a failure
    )  # fmt: skip
    return sorted(p.removeprefix("./") for p in _split_nul(proc.stdout))


def _count_symlinks(src: Path) -> int:
    count = 0
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        count += sum(os.path.islink(os.path.join(dirpath, n)) for n in (*dirnames, *filenames))
    return count


def _copy_folder(
    src: Path, dest: Path, budget: _Budget, progress: Progress, *, is_git: bool
) -> int:
    """Copy the checkout's files of `src` into `dest`; the number of symlinks left out."""
    rels = _folder_files(src, is_git)
    if not rels:
        raise CorpusError(
            f"nothing to add: {src} has no files"
            + (" that git tracks or would add" if is_git else " its .gitignore rules keep")
        )
    # rg lists no symlinks at all (git lists tracked ones, counted below): count them here.
    skipped = 0 if is_git else _count_symlinks(src)
    for i, rel in enumerate(rels):
        source = src / rel
        st = source.lstat() if source.exists() or source.is_symlink() else None
        if st is None or not stat.S_ISREG(st.st_mode):
            skipped += st is not None and stat.S_ISLNK(st.st_mode)
            continue  # a symlink, or a tracked file deleted from the work tree
        if rel == MANIFEST_NAME:
            continue
        budget.take(st.st_size, rel)
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target, follow_symlinks=False)
        if i % 64 == 0 or i + 1 == len(rels):
            progress("copy", i + 1, len(rels))
    return skipped


# --- archives -----------------------------------------------------------------------------------


def _member_path(name: str, archive: str) -> PurePosixPath | None:
    """The member's path inside the archive's single top folder; None for the top folder itself.
    CorpusError for a path that would land outside the snapshot."""
    p = PurePosixPath(name.replace("\\", "/"))
    if p.is_absolute() or ".." in p.parts or re.match(r"^[A-Za-z]:", name):
        raise CorpusError(
            f"{archive} has a member with an unsafe path ({name!r}): refused, nothing was added"
        )
    parts = [part for part in p.parts if part not in ("", ".")]
    return PurePosixPath(*parts[1:]) if len(parts) > 1 else None


def _top_folders(names: Iterator[str]) -> set[str]:
    return {PurePosixPath(n.replace("\\", "/")).parts[0] for n in names if n.strip("/.")}


@dataclass(frozen=True, slots=True)
class _Member:
    """An archive entry, tar or zip alike: what `_write_members` needs of it."""

    name: str
    kind: str  # "file", "dir", "link" (symlink or hard link) or "other"
    size: int
    open: Callable[[], IO[bytes]]


def _tar_members(tar: tarfile.TarFile) -> list[_Member]:
    def opener(m: tarfile.TarInfo) -> Callable[[], IO[bytes]]:
        def read() -> IO[bytes]:
            src = tar.extractfile(m)
            assert src is not None  # a regular member always has a file object
            return src

        return read

    return [
        _Member(
            m.name,
            "file" if m.isfile() else "dir" if m.isdir() else "link" if m.issym() or m.islnk()
            else "other",
            m.size,
            opener(m),
        )
        for m in tar.getmembers()
    ]  # fmt: skip


def _zip_members(zf: zipfile.ZipFile) -> list[_Member]:
    return [
        _Member(
            i.filename,
            "dir" if i.is_dir() else "link" if stat.S_ISLNK(i.external_attr >> 16) else "file",
            i.file_size,
            lambda i=i: zf.open(i),  # type: ignore[misc]
        )
        for i in zf.infolist()
    ]


def _write_members(
    members: list[_Member], archive: str, dest: Path, budget: _Budget, progress: Progress
) -> int:
    """Write the regular files of a package archive (its single top folder stripped) into `dest`;
    the number of links left out. Every path is checked before anything is written."""
    for m in members:
        _member_path(m.name, archive)
    if len(_top_folders(m.name for m in members)) != 1:
        raise CorpusError(f"{archive} is not a package archive: no single top folder")
    skipped = 0
    for i, m in enumerate(members):
        rel = _member_path(m.name, archive)
        if rel is None or m.kind != "file":
            skipped += rel is not None and m.kind == "link"
            continue
        budget.take(m.size, str(rel))
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        with m.open() as src, target.open("xb") as out:
            shutil.copyfileobj(src, out)
        progress("copy", i + 1, len(members))
    return skipped


def _extract(path: Path, dest: Path, budget: _Budget, progress: Progress) -> int:
    name = path.name.lower()
    try:
        if name.endswith((".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar")):
            with tarfile.open(path) as tar:
                return _write_members(_tar_members(tar), path.name, dest, budget, progress)
        if name.endswith(".zip"):
            with zipfile.ZipFile(path) as zf:
                return _write_members(_zip_members(zf), path.name, dest, budget, progress)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError) as exc:
        raise CorpusError(f"{path.name} is not a readable archive: {exc}") from None
    raise CorpusError(f"{path.name} is not an sdist or package tarball (.tar.gz, .tgz or .zip)")


def _fetch_pypi(spec: str, work: Path) -> Path:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9.+!_-]+", spec):
        raise CorpusError(f"pypi:{spec} is not NAME==VERSION (e.g. pypi:click==8.1.7)")
    # `--no-binary NAME`, not `:all:`: the package's own sdist, while its build tools (needed only
    # for pip to read the metadata) come as wheels. Built from source, a Rust or C build backend
    # (maturin, cffi) can take minutes or fail offline, and none of it goes into the corpus.
    name = spec.split("==", 1)[0]
    _run(
        [
            sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", name,
            "--disable-pip-version-check", "--quiet", "--dest", str(work), spec,
        ],
        f"fetching the sdist of {spec} from PyPI",
    )  # fmt: skip
    got = [p for p in work.iterdir() if p.is_file()]
    if len(got) != 1:
        raise CorpusError(f"pip download of {spec} gave {len(got)} files, not one sdist")
    if got[0].suffix == ".whl":
        raise CorpusError(f"{spec} has no sdist on PyPI (pip gave a wheel): not added")
    return got[0]


def _fetch_npm(spec: str, work: Path) -> Path:
    if not re.fullmatch(r"(@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*@[A-Za-z0-9.+_-]+", spec):
        raise CorpusError(f"npm:{spec} is not NAME@VERSION (e.g. npm:express@4.18.2)")
    _run(
        ["npm", "pack", spec, "--pack-destination", str(work), "--loglevel=error"],
        f"fetching {spec} from the npm registry",
        cwd=work,
    )
    got = [p for p in work.iterdir() if p.name.endswith(".tgz")]
    if len(got) != 1:
        raise CorpusError(f"npm pack {spec} gave {len(got)} tarballs, not one")
    return got[0]


def _git_archive(repo: Path, rev: str, work: Path) -> Path:
    if rev.startswith("-"):
        raise CorpusError(f"{rev!r} is not a git revision")
    out = work / "source.tar"
    top = repo.resolve().name or "source"
    proc = _run(
        ["git", "-C", str(repo), "archive", "--format=tar", f"--prefix={top}/", rev, "--"],
        f"reading {repo} at {rev}",
    )
    out.write_bytes(proc.stdout)
    return out


# --- adding -------------------------------------------------------------------------------------


def _make_read_only(root: Path) -> None:
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            os.chmod(os.path.join(dirpath, f), 0o444)
    for dirpath, _dirs, _files in os.walk(root, topdown=False):
        os.chmod(dirpath, 0o555)


def remove_tree(root: Path) -> None:
    """rmtree that also removes read-only snapshots (their folders are 0o555)."""

    def make_writable(func: Callable[..., object], path: str, _exc: object) -> None:
        os.chmod(os.path.dirname(path) or ".", 0o755)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, 0o755)
        func(path)

    if root.exists() or root.is_symlink():
        # `onerror`, not 3.12's `onexc`: the project runs on 3.11 too.
        shutil.rmtree(root, onerror=make_writable)


def sweep_staging(folder: Path, prefix: str = _STAGING_PREFIX) -> None:
    """Remove the staging folders (`{prefix}{name}-{pid}-...`) under `folder` whose `add` is no
    longer running (killed, or the disk filled): a corpus's, or a model's (`weights`)."""
    for p in folder.glob(f"{prefix}*"):
        pid = p.name.rsplit("-", 2)[-2] if p.name.count("-") >= 2 else ""
        if pid.isdigit() and pid_alive(int(pid)):
            continue
        remove_tree(p)


def describe_source(source: str) -> str:
    """`source` as the manifest records it (local paths made absolute)."""
    for prefix in ("pypi:", "npm:"):
        if source.startswith(prefix):
            return source
    path, _, rev = source.removeprefix("git:").partition("@")
    kind = "git" if source.startswith("git:") or rev else "dir"
    full = str(Path(path).expanduser().resolve())
    return f"{kind}:{full}@{rev}" if rev else f"{kind}:{full}"


def _fill(source: str, stage: Path, work: Path, budget: _Budget, progress: Progress) -> int:
    if source.startswith("pypi:"):
        progress("fetch", 0, 0)
        return _extract(_fetch_pypi(source.removeprefix("pypi:"), work), stage, budget, progress)
    if source.startswith("npm:"):
        progress("fetch", 0, 0)
        return _extract(_fetch_npm(source.removeprefix("npm:"), work), stage, budget, progress)
    path_text, _, rev = source.removeprefix("git:").partition("@")
    src = Path(path_text).expanduser()
    if not src.exists():
        raise CorpusError(f"{source!r}: no such directory (or use pypi:NAME==VER, npm:NAME@VER)")
    if not src.is_dir():
        raise CorpusError(f"{source!r} is not a directory")
    is_git = _is_git_worktree(src)  # one `git rev-parse` for the checks and the copy below
    if rev:
        if not is_git:
            raise CorpusError(f"{src} is not the top of a git checkout: @{rev} needs one")
        return _extract(_git_archive(src, rev, work), stage, budget, progress)
    if source.startswith("git:") and not is_git:
        raise CorpusError(f"{src} is not the top of a git checkout")
    if (
        src.resolve() == config.corpora_dir().resolve()
        or config.corpora_dir().resolve().is_relative_to(src.resolve())
    ):
        raise CorpusError(f"{src} holds the corpora folder itself: choose a folder inside it")
    return _copy_folder(src, stage, budget, progress, is_git=is_git)


def add_corpus(
    name: str,
    source: str,
    *,
    replace: bool = False,
    max_bytes: int | None = None,
    progress: Progress = _no_progress,
) -> AddResult:
    """Snapshot `source` as corpus `name` (see the module doc); CorpusError with the reason when it
    cannot, and then nothing under the corpora folder has changed."""
    check_name(name)
    corpora = config.corpora_dir()
    corpora.mkdir(parents=True, exist_ok=True)
    target = corpora / name
    if (target.exists() or target.is_symlink()) and not replace:
        raise CorpusError(f"a corpus named {name!r} exists already: --replace replaces it")
    sweep_staging(corpora)
    budget = _Budget(max_bytes if max_bytes is not None else max_corpus_bytes())
    stage = Path(tempfile.mkdtemp(prefix=f"{_STAGING_PREFIX}{name}-{os.getpid()}-", dir=corpora))
    try:
        with tempfile.TemporaryDirectory(prefix="codesearch-fetch-") as work:
            skipped = _fill(source, stage, Path(work), budget, progress)
        if not any(stage.iterdir()):
            raise CorpusError(f"{source!r} has no files to search: nothing was added")
        manifest = write_manifest(
            stage, describe_source(source), progress=lambda d, t: progress("hash", d, t)
        )
        _make_read_only(stage)
        _move_into_place(stage, target, replace)
    except OSError as exc:
        remove_tree(stage)
        raise CorpusError(
            f"could not write the snapshot of {source!r}: {exc.strerror or exc}; nothing was added"
        ) from None
    except BaseException:
        remove_tree(stage)
        raise
    return AddResult(name, target, manifest, skipped)


def swap_in(stage: Path, target: Path, prefix: str = _STAGING_PREFIX) -> None:
    """Put the finished `stage` where `target` is: the old one is renamed aside first (a
    staging name, which `sweep_staging` removes if this is killed midway) and put back if the
    rename fails, so `target` is always whole, old or new; then the old one is removed."""
    old = target.with_name(f"{prefix}old-{target.name}-{os.getpid()}-x")
    os.rename(target, old)
    try:
        os.rename(stage, target)
    except OSError:
        os.rename(old, target)
        raise
    remove_tree(old)


def _move_into_place(stage: Path, target: Path, replace: bool) -> None:
    os.chmod(stage, 0o755)  # rename needs no write on the folder itself; its parent is ours
    if replace and (target.exists() or target.is_symlink()):
        swap_in(stage, target)
    else:
        try:
            os.rename(stage, target)
        except OSError as exc:
            raise CorpusError(f"could not move the snapshot into {target}: {exc}") from None
    os.chmod(target, 0o555)
