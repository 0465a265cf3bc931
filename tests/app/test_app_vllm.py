"""The Propose page's in-process vLLM path, end to end on the REAL vLLM (CPU build) and the tiny
random-weight model: pick the model, load it (status shown), propose for two blueprints, and find the
proposals executed and graded in the store.

AppTest runs inside the vLLM venv (it holds vLLM and torch); the venv needs streamlit and altair for
that, and the test is skipped with that reason when they are missing.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.vllm_support.env import run_in_vllm_env, skip_reason, tiny_model_dir, vllm_python

MARK = "RESULT "


def _app_deps_missing() -> str | None:
    py = vllm_python()
    if py is None:
        return skip_reason()
    probe = subprocess.run(
        [str(py), "-c", "import streamlit, altair"], capture_output=True, text=True, timeout=120
    )
    if probe.returncode != 0:
        return (
            f"the vLLM venv ({py}) lacks streamlit/altair, which the app needs: "
            "add them to LIB_PACKAGES in .ci/vllm_venv.sh"
        )
    return None


_MISSING = _app_deps_missing()

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.slow,
    pytest.mark.skipif(_MISSING is not None, reason=_MISSING or ""),
]

#: Runs in the vLLM venv with cwd = the repo root. Prints one RESULT line of JSON.
SNIPPET = r"""
import json, os
from streamlit.testing.v1 import AppTest
import streamlit as st

def report(value):
    print("RESULT " + json.dumps(value), flush=True)

def texts(at, kind):
    return [str(e.value) for e in getattr(at, kind)]

at = AppTest.from_file("app.py", default_timeout=900).run()
at.switch_page("pages/propose.py").run()
at.selectbox(key="pf:corpus").set_value("ledger").run()
at.number_input(key="pf:limit").set_value(2).run()
at.segmented_control(key="pe:kind").set_value("vllm").run()
default_tp = at.number_input(key="pe:vllm_tp:Qwen/Qwen2.5-Coder-7B-Instruct").value
at.selectbox(key="pe:vllm_preset").set_value("other").run()
at.text_input(key="pe:vllm_model").input(os.environ["TINY_MODEL"]).run()
at.number_input(key="pe:vllm_tp:other").set_value(int(os.environ["TP"])).run()
at.number_input(key="pe:vllm_len:other").set_value(2048).run()
at.toggle(key="pe:vllm_eager").set_value(True).run()
at.number_input(key="pe:max_tokens").set_value(1024).run()
# A short prompt leaves the tiny model's context for the output.
at.toggle(key="pp:rules").set_value(False).run()
before_load = texts(at, "info")
at.button(key="pe:vllm_load").click().run()
load_errors = texts(at, "error")
at.button(key="propose_start").click().run()
sidebar = [str(c.value) for c in at.sidebar.caption]
result = {
    "default_tp": default_tp,
    "before_load": before_load,
    "sidebar": sidebar,
    "load_errors": load_errors,
    "exceptions": [str(e.message) for e in at.exception],
    "errors": texts(at, "error"),
    "success": texts(at, "success"),
}
st.cache_resource.clear()  # closes the store (the engine is shut down below)
from codesearch_core.store.core import Store
with Store(os.environ["CODESEARCH_DB"]) as store:
    counts = store.counts()
    items = store.review_queue(limit=100).items
    result.update(
        proposals=counts.proposals,
        executed=counts.executed,
        engines=sorted({i.engine for i in items}),
        models=sorted({i.model for i in items}),
        blueprints=sorted({i.blueprint_id for i in items}),
    )
    first = store.review_item(items[0].proposal_id) if items else None
    result["prompt_stored"] = bool(first and first.proposal.proposal.prompt)
report(result)
from codesearch_core.engines.vllm_engine import shutdown_vllm_engine
shutdown_vllm_engine()
os._exit(0)
"""


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_model_dir(tmp_path_factory)


def run_app_snippet(model: Path, db: Path, *, tp: int) -> dict[str, Any]:
    proc = run_in_vllm_env(
        SNIPPET,
        env_extra={"TINY_MODEL": str(model), "CODESEARCH_DB": str(db), "TP": str(tp)},
        tensor_parallel_size=tp,
        in_process=tp == 1,
        timeout=900,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith(MARK)]
    assert proc.returncode == 0 and lines, (proc.stdout[-3000:], proc.stderr[-6000:])
    result: dict[str, Any] = json.loads(lines[-1].removeprefix(MARK))
    return result


def test_the_propose_page_loads_vllm_and_stores_graded_proposals(
    tiny_model: Path, tmp_path: Path
) -> None:
    result = run_app_snippet(tiny_model, tmp_path / "studio.duckdb", tp=1)
    assert result["default_tp"] == 2
    assert any("Not loaded" in i for i in result["before_load"])
    assert not result["load_errors"], result["load_errors"]
    sidebar = " ".join(result["sidebar"])
    assert "vLLM ready" in sidebar and "vLLM in this process" in sidebar, sidebar
    assert not result["exceptions"] and not result["errors"], result
    assert any(s.startswith("Last run:") for s in result["success"]), result["success"]
    assert result["engines"] == ["vllm"] and result["models"] == [str(tiny_model)]
    assert len(result["blueprints"]) == 2 and all(
        b.startswith("ledger-") for b in result["blueprints"]
    )
    assert result["proposals"] >= 2 and result["executed"] == result["proposals"]
    assert result["prompt_stored"]
