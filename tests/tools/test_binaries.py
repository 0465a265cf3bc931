"""Finding rg and ast-grep, and asking rg what it supports."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from codesearch_core.tools import binaries
from codesearch_core.tools.binaries import (
    Binary,
    ToolNotFoundError,
    ast_grep_path,
    find_binary,
    rg_path,
    rg_type_names,
)


@pytest.fixture(autouse=True)
def _fresh_lookups() -> Iterator[None]:
    binaries.clear_caches()
    yield
    binaries.clear_caches()


def test_both_tools_are_found_and_run() -> None:
    rg = subprocess.run([rg_path(), "--version"], capture_output=True, text=True, check=True)
    assert rg.stdout.startswith("ripgrep ")
    sg = subprocess.run([ast_grep_path(), "--version"], capture_output=True, text=True, check=True)
    assert sg.stdout.startswith("ast-grep ")


def test_tools_beside_the_interpreter_are_found_without_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `uv run` puts the venv's bin dir on PATH; a bare `.venv/bin/python` does not.
    monkeypatch.setenv("PATH", "")
    assert Path(find_binary(Binary.RIPGREP)).parent == Path(sys.executable).parent


def test_env_override_names_the_executable(monkeypatch: pytest.MonkeyPatch) -> None:
    real = rg_path()
    binaries.clear_caches()
    monkeypatch.setenv("CODESEARCH_RG", real)
    monkeypatch.setenv("PATH", "")
    assert rg_path() == real


def test_env_override_to_a_missing_file_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CODESEARCH_AST_GREP", str(tmp_path / "no-such-ast-grep"))
    with pytest.raises(ToolNotFoundError, match="CODESEARCH_AST_GREP"):
        ast_grep_path()


def test_missing_tool_says_where_it_looked_and_how_to_fix_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    with pytest.raises(ToolNotFoundError, match=r"`rg` not found on PATH.*CODESEARCH_RG"):
        rg_path()


def test_rg_type_names_come_from_the_installed_rg() -> None:
    names = rg_type_names()
    assert {"py", "c", "js", "ts", "rust", "go"} <= names
    assert "nosuchtype" not in names
