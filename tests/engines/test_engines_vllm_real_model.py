"""Does a real model produce valid calls? SmolLM2-135M-Instruct, added by name (`codesearch model
add smollm2`, fetched and converted by .ci/fetch_models.sh before the tests), asked for calls by
`propose --engine vllm --model smollm2` on the real vLLM CPU build, in eager mode (it starts in
seconds; compiling takes minutes). One test: the random tiny model covers the engine's options
(tests/engines/test_engines_vllm.py), this one that a trained model's weights, converted from a
GGUF, load, take the prompt and answer with calls under the grammar."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from codesearch_core.corpora.blueprints import load_seed_blueprints
from codesearch_core.errors import ModelError
from codesearch_core.tools.schemas import validate_tool_call
from codesearch_core.weights import model_dir
from tests.vllm_support.env import skip_reason, vllm_env, vllm_python

REPO = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(vllm_python() is None, reason=skip_reason()),
]


def _smollm2() -> Path:
    try:
        return model_dir("smollm2")
    except ModelError as err:
        pytest.skip(f"{err} (bash .ci/fetch_models.sh fetches it)")


def test_smollm2_by_name_answers_seeds_with_valid_calls(tmp_path: Path) -> None:
    folder = _smollm2()
    ids = [b.id for b in load_seed_blueprints() if "plan" not in b.tags][:4]
    out = tmp_path / "proposals.jsonl"
    python = vllm_python()
    assert python is not None
    proc = subprocess.run(
        [str(python), "-m", "codesearch_core", "propose", "--engine", "vllm",
         "--model", "smollm2", "--tp", "1", "--enforce-eager", "--max-tokens", "96",
         "--temperature", "0", "--ids", *ids, "--out", str(out)],
        env=vllm_env(), cwd=REPO, capture_output=True, text=True, timeout=420,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-6000:]
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").split("\n") if line]
    assert [r["blueprint_id"] for r in rows] == ids
    # the name was resolved to the pinned folder, and that is the model the rows record
    assert {(r["engine"], r["model"]) for r in rows} == {("vllm", str(folder))}
    valid = [r for r in rows if r["valid"]]
    for r in valid:
        assert validate_tool_call(r["call"]) is None, r
        assert r["call"]["name"] in ("ripgrep_search", "ast_grep_search"), r
    # under the grammar a finished answer is a call; only one cut at --max-tokens may fail
    for r in rows:
        assert r["valid"] or r["finish_reason"] == "length", r
    assert valid, rows
