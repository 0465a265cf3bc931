"""The gym as an OpenEnv environment package: `codesearch gym package OUT_DIR`.

OpenEnv's tooling (`openenv validate`, `openenv build`, `uv run --project DIR server`) expects an
environment to be a folder of its own: `openenv.yaml`, a `pyproject.toml` whose `server` script is
`server/app.py`'s `main`, and that project's `uv.lock`. The repository's top level is the studio's
project, so the package is written on demand rather than kept in the tree: its `uv.lock` is
resolved for it when it is written (as `openenv init` does), against the studio checkout it runs
from (a path dependency: the corpora and the seeds live there), so it is never a stale copy.

The package's server is `codesearch gym serve` with the task set and limits given when it was
written (more flags at run time: `uv run --project DIR server --port 8100`); `server.app:app` (the
manifest's `app`) is the same server's ASGI app for `uvicorn`. No OpenEnv import here: writing a
package needs only the files' text.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

#: The environment's name in `openenv.yaml` (and the Python package's, as `openenv init` makes it).
PACKAGE_NAME: Final = "codesearch_gym"
#: A hang guard for `uv lock`: it resolves ~170 packages, a few seconds from a warm cache.
LOCK_TIMEOUT_S: Final = 600

_MANIFEST = f"""\
spec_version: 1
name: {PACKAGE_NAME}
type: space
runtime: fastapi
app: server.app:app
port: 8000
"""

_PYPROJECT = """\
# Written by `codesearch gym package`: the code-search gym as an OpenEnv environment.
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "openenv-{name}"
version = "0.1.0"
description = "The codesearch gym: find code with ripgrep and ast-grep, rewarded on the spans found"
requires-python = ">=3.11"
dependencies = ["openenv-core>=0.3,<0.4", "codesearch-gym-studio[gym]"]

[project.scripts]
server = "{name}.server.app:main"

[tool.setuptools]
packages = ["{name}", "{name}.server"]
package-dir = {{ "{name}" = ".", "{name}.server" = "server" }}

[tool.uv.sources]
# The studio checkout this package was written from: its corpora and seed blueprints are the tasks.
codesearch-gym-studio = {{ path = {studio}, editable = true }}
"""

_APP = '''\
"""The code-search gym as an OpenEnv server (written by `codesearch gym package`).

    uv run --project . server [--port 8100 ...]     # `codesearch gym serve` with SERVE_ARGS
    uvicorn {name}.server.app:app                    # the same app, under any ASGI server
"""

import sys
from typing import Any

from codesearch_core.cli.gym_cmds import openenv_app, serve_main

#: The task set and limits this package was written with; flags given at run time come after.
SERVE_ARGS = {serve_args}


def __getattr__(name: str) -> Any:
    if name == "app":  # built when asked for: `main` starts its own server
        return openenv_app(SERVE_ARGS)
    raise AttributeError(name)


def main() -> int:
    return serve_main([*SERVE_ARGS, *sys.argv[1:]])


if __name__ == "__main__":
    raise SystemExit(main())
'''

_README = """\
# {name}: the code-search gym as an OpenEnv environment

Written by `codesearch gym package` from the studio checkout at `{studio}`, which it runs from
(its corpora and seed blueprints are the tasks). Serve it with `uv run --project . server`, then
play episodes over a WebSocket (OpenEnv's `EnvClient`) or plain HTTP (`/session/reset`,
`/session/step`, `/session/state`, `/session/close`). The studio's docs/gym_openenv.md has the rest.
"""


@dataclass(frozen=True, slots=True)
class WrittenPackage:
    folder: Path
    files: tuple[Path, ...]
    #: Empty when `uv.lock` was written; otherwise why not (the package is there, unlocked).
    lock_error: str = ""


def studio_checkout() -> Path:
    """The studio's source checkout (a package's path dependency); ValueError if this is an
    installed copy without one."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "pyproject.toml").is_file() or not (root / "codesearch_core").is_dir():
        raise ValueError(
            f"{root} is not a checkout of the studio (no pyproject.toml beside codesearch_core): "
            "write the package from a clone"
        )
    return root


def write_package(out: Path, serve_args: Sequence[str], *, lock: bool = True) -> WrittenPackage:
    """Write the package into `out` (missing or empty: ValueError otherwise, nothing touched),
    then resolve its `uv.lock` with `uv lock` unless `lock` is false."""
    studio = studio_checkout()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"{out} exists and is not an empty folder: give a new one")
    texts = {
        "openenv.yaml": _MANIFEST,
        "pyproject.toml": _PYPROJECT.format(name=PACKAGE_NAME, studio=json.dumps(str(studio))),
        "__init__.py": '"""The code-search gym as an OpenEnv environment."""\n',
        "server/__init__.py": "",
        "server/app.py": _APP.format(name=PACKAGE_NAME, serve_args=repr(list(serve_args))),
        "README.md": _README.format(name=PACKAGE_NAME, studio=studio),
    }
    written = []
    for rel, text in texts.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    error = _lock(out) if lock else "not asked for (--no-lock)"
    if not error:
        written.append(out / "uv.lock")
    return WrittenPackage(out, tuple(written), error)


def _lock(folder: Path) -> str:
    """`uv lock` in `folder`; its error, or empty when the lock is written."""
    uv = shutil.which("uv")
    if uv is None:
        return "uv is not on PATH: install it (pip install uv), then run `uv lock` in the package"
    try:
        done = subprocess.run(
            [uv, "lock"], cwd=folder, capture_output=True, text=True, timeout=LOCK_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        return f"`uv lock` took more than {LOCK_TIMEOUT_S} s: run it again in the package"
    if done.returncode != 0:
        return f"`uv lock` failed: {done.stderr.strip()[-2000:]}"
    return ""
