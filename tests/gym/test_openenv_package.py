"""`codesearch gym package OUT_DIR` (`gym.openenv_package`): the gym as an OpenEnv environment
package, checked by the real `openenv validate` (openenv-core's console script in the venv) and
locked by the real `uv lock` (resolved against this checkout; from uv's cache, or PyPI when the
cache lacks a package). The package's `app` is served here in process; its `server` script is
`gym serve`, which tests/gym/test_openenv_server.py runs and validates (`openenv validate --url`).
`uv run --project OUT server` itself is not run here: it installs a venv of its own (171
packages).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from codesearch_core.cli import main
from codesearch_core.gym.openenv_package import PACKAGE_NAME, studio_checkout

OPENENV = Path(sys.executable).with_name("openenv")
#: A hang guard: `openenv` imports Gradio and FastMCP, seconds on a loaded machine.
VALIDATE_S = 300


def validate(folder: Path) -> tuple[int, dict[str, object]]:
    done = subprocess.run([str(OPENENV), "validate", str(folder), "--json"],
                          capture_output=True, text=True, timeout=VALIDATE_S)  # fmt: skip
    return done.returncode, json.loads(done.stdout)


def test_a_written_package_passes_openenv_validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "codesearch_gym"
    assert main(["gym", "package", str(out), "--blueprints", "seeds", "--max-turns", "3"]) == 0
    assert "openenv validate" in capsys.readouterr().err
    code, report = validate(out)
    assert code == 0 and report["passed"] is True and report["issues"] == [], report
    # What it serves: `gym serve` with the task set and limits given, from this checkout.
    app = ast.parse((out / "server" / "app.py").read_text())
    serve_args = next(
        ast.literal_eval(n.value)
        for n in app.body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "SERVE_ARGS"
    )
    assert serve_args[:4] == ["--blueprints", "seeds", "--max-turns", "3"]
    project = tomllib.loads((out / "pyproject.toml").read_text())
    assert project["project"]["scripts"]["server"] == f"{PACKAGE_NAME}.server.app:main"
    source = project["tool"]["uv"]["sources"]["codesearch-gym-studio"]
    assert Path(source["path"]) == studio_checkout()
    lock = (out / "uv.lock").read_text()
    assert 'name = "openenv-core"' in lock and 'name = "codesearch-gym-studio"' in lock
    # The manifest's `app` (server.app:app, for uvicorn): the same server, the same limits.
    spec = importlib.util.spec_from_file_location("packaged_app", out / "server" / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with TestClient(module.app) as served:
        first = served.post("/session/reset", json={"index": 0}).json()
        assert first["observation"]["turns_left"] == 3  # --max-turns 3, as packaged
        assert served.get("/health").json()["status"] == "healthy"


def test_a_used_folder_or_bad_limits_are_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "pkg"
    assert main(["gym", "package", str(out), "--no-lock"]) == 0
    assert "no uv.lock: not asked for (--no-lock)" in capsys.readouterr().err
    assert not (out / "uv.lock").exists() and (out / "openenv.yaml").is_file()
    # A folder with something in it is never written over.
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert main(["gym", "package", str(out)]) == 2
    assert "exists and is not an empty folder" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    # Bad limits are refused before anything is written.
    assert main(["gym", "package", str(tmp_path / "other"), "--max-turns", "0"]) == 2
    assert not (tmp_path / "other").exists()
