"""Pinned corpora: `codesearch corpus add/list/check/pin` on real folders, git checkouts and
archives, and the bad inputs the issue names (unsafe archives, symlinks out, name collisions, a
disk that fills, hand edits). Package sources (pypi:, npm:) are exercised on archives built here:
nothing downloads at test time; `tests/corpora/test_real_corpora.py` checks the fetched ones."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from codesearch_core.cli import main
from codesearch_core.corpora import add_corpus, check_corpus, corpus_info, read_manifest
from codesearch_core.corpora import sources as corpus_sources
from codesearch_core.corpora.snapshot import MANIFEST_NAME
from codesearch_core.errors import CorpusError


@pytest.fixture
def corpora(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "corpora"
    root.mkdir()
    monkeypatch.setenv("CODESEARCH_CORPORA", str(root))
    return root


def _project(tmp_path: Path) -> Path:
    src = tmp_path / "project"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "core.py").write_text("def run():\n    return DB.query(1)\n", encoding="utf-8")
    (src / "pkg" / "util.py").write_text("print('x')\n", encoding="utf-8")
    (src / "build").mkdir()
    (src / "build" / "out.py").write_text("generated = 1\n", encoding="utf-8")
    (src / ".gitignore").write_text("build/\n*.log\n", encoding="utf-8")
    (src / "debug.log").write_text("noise\n", encoding="utf-8")
    (src / "pkg" / ".gitignore").write_text("secret.py\n", encoding="utf-8")
    (src / "pkg" / "secret.py").write_text("KEY = 1\n", encoding="utf-8")
    return src


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_a_folder_is_snapshotted_as_a_checkout_would_have_it(tmp_path: Path, corpora: Path) -> None:
    src = _project(tmp_path)
    result = add_corpus("proj", str(src))
    root = corpora / "proj"
    # The .gitignore rules apply (root and subfolder), as in a checkout; the manifest is added.
    assert _files(root) == {
        ".gitignore", "pkg/.gitignore", "pkg/core.py", "pkg/util.py", MANIFEST_NAME,
    }  # fmt: skip
    manifest = read_manifest(root)
    assert manifest is not None and manifest.snapshot_id == result.manifest.snapshot_id
    assert manifest.source == f"dir:{src.resolve()}"
    # Read-only, and unchanged: the check passes and names no file.
    assert not os.access(root / "pkg" / "core.py", os.W_OK) or os.geteuid() == 0
    assert (root / "pkg" / "core.py").stat().st_mode & 0o222 == 0
    check = check_corpus("proj")
    assert check.ok and check.lines() == []
    info = corpus_info("proj")
    assert (info.files, info.languages) == (4, (("python", 2),))


def test_the_snapshot_id_is_the_content_whatever_the_source(tmp_path: Path, corpora: Path) -> None:
    src = _project(tmp_path)
    first = add_corpus("a", str(src)).manifest
    second = add_corpus("b", str(src)).manifest
    assert first.snapshot_id == second.snapshot_id
    (src / "pkg" / "util.py").write_text("print('y')\n", encoding="utf-8")
    assert add_corpus("c", str(src)).manifest.snapshot_id != first.snapshot_id


def test_a_git_checkout_at_a_revision(tmp_path: Path, corpora: Path) -> None:
    src = _project(tmp_path)
    git = ["git", "-C", str(src), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    (src / "pkg" / "new.py").write_text("x = 2\n", encoding="utf-8")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "two"], check=True)
    add_corpus("old", f"git:{src}@HEAD~1")
    assert "pkg/new.py" not in _files(corpora / "old")
    assert "pkg/core.py" in _files(corpora / "old")
    add_corpus("now", str(src))  # a work tree: what git tracks or would add
    assert "pkg/new.py" in _files(corpora / "now")
    assert "build/out.py" not in _files(corpora / "now")
    with pytest.raises(CorpusError, match=r"not a git revision|failed"):
        add_corpus("bad", f"git:{src}@no-such-rev")
    assert not (corpora / "bad").exists()


def _tar(path: Path, members: dict[str, bytes], symlinks: dict[str, str] | None = None) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (symlinks or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tar.addfile(info)
    return path


@pytest.fixture
def fake_fetch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """pypi:/npm: sources served from archives made here (the fetch itself is pip's and npm's)."""
    served: dict[str, Path] = {}

    def fetch(spec: str, work: Path) -> Path:
        if spec not in served:
            raise CorpusError(f"fetching {spec} failed (exit 1): ERROR: No matching distribution")
        target = work / served[spec].name
        target.write_bytes(served[spec].read_bytes())
        return target

    monkeypatch.setattr(corpus_sources, "_fetch_pypi", fetch)
    monkeypatch.setattr(corpus_sources, "_fetch_npm", fetch)
    return served


def test_package_archives_unsafe_members_and_symlinks(
    tmp_path: Path, corpora: Path, fake_fetch: dict[str, Path]
) -> None:
    fake_fetch["pkg==1.0"] = _tar(
        tmp_path / "pkg-1.0.tar.gz",
        {"pkg-1.0/pkg/__init__.py": b"def f():\n    pass\n", "pkg-1.0/setup.cfg": b"[x]\n"},
        symlinks={"pkg-1.0/link.py": "/etc/passwd"},
    )
    result = add_corpus("pkg", "pypi:pkg==1.0")
    assert _files(corpora / "pkg") == {"pkg/__init__.py", "setup.cfg", MANIFEST_NAME}
    assert result.skipped_symlinks == 1
    assert read_manifest(corpora / "pkg").source == "pypi:pkg==1.0"  # type: ignore[union-attr]

    for bad in ("../evil.py", "/abs/evil.py", "pkg-2/../../evil.py"):
        fake_fetch["evil@1.0.0"] = _tar(tmp_path / "evil.tgz", {"package/a.js": b"1", bad: b"2"})
        with pytest.raises(CorpusError, match="unsafe path"):
            add_corpus("evil", "npm:evil@1.0.0")
        assert not (corpora / "evil").exists()
        assert not (tmp_path / "evil.py").exists()
    assert [p.name for p in corpora.iterdir()] == ["pkg"]  # no staging folder left behind

    zip_path = tmp_path / "z-1.0.zip"
    with zipfile.ZipFile(zip_path, "w") as zf:
        zf.writestr("z-1.0/z.py", "z = 1\n")
    fake_fetch["z==1.0"] = zip_path
    add_corpus("z", "pypi:z==1.0")
    assert _files(corpora / "z") == {"z.py", MANIFEST_NAME}

    whl = tmp_path / "w-1.0-py3-none-any.whl"
    whl.write_bytes(b"not an sdist")
    fake_fetch["w==1.0"] = whl
    with pytest.raises(CorpusError, match="not an sdist"):
        add_corpus("w", "pypi:w==1.0")
    with pytest.raises(CorpusError, match="No matching distribution"):
        add_corpus("nope", "pypi:nope==1.0")


def test_bad_sources_names_and_collisions(tmp_path: Path, corpora: Path) -> None:
    src = _project(tmp_path)
    with pytest.raises(CorpusError, match="no such directory"):
        add_corpus("x", str(tmp_path / "missing"))
    (tmp_path / "file.txt").write_text("x", encoding="utf-8")
    with pytest.raises(CorpusError, match="not a directory"):
        add_corpus("x", str(tmp_path / "file.txt"))
    for name in ("../up", ".hidden", "a/b", ""):
        with pytest.raises(CorpusError, match="not a corpus name"):
            add_corpus(name, str(src))
    with pytest.raises(CorpusError, match="NAME==VERSION"):
        add_corpus("x", "pypi:click")
    with pytest.raises(CorpusError, match="NAME@VERSION"):
        add_corpus("x", "npm:--registry=http://evil")
    add_corpus("proj", str(src))
    before = read_manifest(corpora / "proj")
    with pytest.raises(CorpusError, match="exists already: --replace"):
        add_corpus("proj", str(src))
    (src / "pkg" / "more.py").write_text("y = 1\n", encoding="utf-8")
    replaced = add_corpus("proj", str(src), replace=True).manifest
    assert before is not None and replaced.snapshot_id != before.snapshot_id
    assert "pkg/more.py" in _files(corpora / "proj")
    with pytest.raises(CorpusError, match="too large"):
        add_corpus("big", str(src), max_bytes=10)
    assert not (corpora / "big").exists()


def test_a_folder_with_no_files_is_refused_with_the_reason(tmp_path: Path, corpora: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CorpusError, match=r"nothing to add: .*empty has no files"):
        add_corpus("x", str(empty))
    ignored = tmp_path / "ignored"
    ignored.mkdir()
    (ignored / ".gitignore").write_text("*.log\n", encoding="utf-8")
    (ignored / "run.log").write_text("x\n", encoding="utf-8")
    add_corpus("only-gitignore", str(ignored))  # the .gitignore itself is a file of the checkout
    (ignored / ".gitignore").write_text("*\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"has no files its \.gitignore rules keep"):
        add_corpus("y", str(ignored))
    assert not (corpora / "x").exists() and not (corpora / "y").exists()


def test_symlinks_out_of_a_folder_are_not_copied(tmp_path: Path, corpora: Path) -> None:
    src = _project(tmp_path)
    outside = tmp_path / "outside.py"
    outside.write_text("SECRET = 1\n", encoding="utf-8")
    (src / "pkg" / "link.py").symlink_to(outside)
    result = add_corpus("proj", str(src))
    assert result.skipped_symlinks == 1
    assert not (corpora / "proj" / "pkg" / "link.py").exists()


def test_a_disk_that_fills_leaves_no_half_corpus(tmp_path: Path, corpora: Path) -> None:
    src = _project(tmp_path)
    (src / "pkg" / "big.py").write_bytes(b"x = 1\n" * 200_000)  # 1.2 MB: over the limit below
    code = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))\n"
        "from codesearch_core.cli import main\n"
        f"sys.exit(main(['corpus', 'add', 'proj', '--from', {str(src)!r}]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "CODESEARCH_CORPORA": str(corpora)},
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "could not write the snapshot" in proc.stderr and "nothing was added" in proc.stderr
    assert list(corpora.iterdir()) == []  # no corpus, no staging folder


def test_cli_add_list_check_pin_and_hand_edits(
    tmp_path: Path, corpora: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _project(tmp_path)
    assert main(["corpus", "add", "proj", "--from", str(src)]) == 0
    assert "added corpus proj: 4 files" in capsys.readouterr().out
    assert main(["corpus", "list", "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert listed["name"] == "proj" and len(listed["snapshot_id"]) == 64
    assert listed["languages"] == {"python": 2} and listed["files"] == 4
    assert main(["corpus", "check", "proj"]) == 0
    capsys.readouterr()

    core = corpora / "proj" / "pkg" / "core.py"
    os.chmod(core, 0o644)
    core.write_text("def run():\n    return 2\n", encoding="utf-8")
    (corpora / "proj" / "pkg" / "util.py").unlink()
    (corpora / "proj" / "pkg" / "added.py").write_text("z = 1\n", encoding="utf-8")
    assert main(["corpus", "check", "proj"]) == 1
    out = capsys.readouterr()
    assert "changed  pkg/core.py" in out.out
    assert "removed  pkg/util.py" in out.out
    assert "added    pkg/added.py" in out.out
    assert "corpus pin NAME" in out.err
    assert main(["corpus", "pin", "proj"]) == 0
    assert main(["corpus", "check", "proj"]) == 0
    assert "matches its snapshot" in capsys.readouterr().out


def test_a_damaged_manifest_is_named(tmp_path: Path, corpora: Path) -> None:
    add_corpus("proj", str(_project(tmp_path)))
    manifest = corpora / "proj" / MANIFEST_NAME
    os.chmod(corpora / "proj", 0o755)
    manifest.write_text(manifest.read_text(encoding="utf-8").replace('"pkg/', '"pkh/'), "utf-8")
    with pytest.raises(CorpusError, match="was edited"):
        corpus_info("proj")
    manifest.write_text("{not json", encoding="utf-8")
    with pytest.raises(CorpusError, match="damaged"):
        check_corpus("proj")


def test_a_check_rehashes_what_changed_stat_and_full_rehashes_all(
    tmp_path: Path, corpora: Path
) -> None:
    add_corpus("proj", str(_project(tmp_path)))
    util = corpora / "proj" / "pkg" / "util.py"
    before = util.stat()
    os.chmod(util, 0o644)
    util.write_text("print('z')\n", encoding="utf-8")  # same size
    os.utime(util, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the same mtime
    # Like git's index, the quick check trusts an unchanged size and mtime; --full does not.
    assert check_corpus("proj").ok
    assert check_corpus("proj", full=True).changed == ("pkg/util.py",)
    os.utime(util)  # a real edit moves the mtime: the quick check hashes the file again
    assert check_corpus("proj").changed == ("pkg/util.py",)
