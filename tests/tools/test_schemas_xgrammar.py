"""Both schemas compile in xgrammar, the grammar backend vLLM's guided decoding uses.

A schema feature xgrammar cannot compile would make guided decoding fail (or, with another backend,
silently fall back to unconstrained output), so this is a property of the schemas, tested for real.
xgrammar imports torch, so it runs in the vLLM test venv (`bash .ci/vllm_venv.sh`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.vllm_support.env import run_in_vllm_env, skip_reason, tiny_model_dir, vllm_python

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(vllm_python() is None, reason=skip_reason()),
]

MARK = "@@XGRAMMAR@@"

SNIPPET = r"""
import json, os, sys
import xgrammar as xgr
from transformers import AutoTokenizer
from vllm.v1.structured_output.backend_xgrammar import has_xgrammar_unsupported_json_features
from codesearch_core.tools.schemas import COMPOSITE_PLAN_SCHEMA, TOOL_CALL_SCHEMA

tok = AutoTokenizer.from_pretrained(os.environ["TINY_MODEL"])
compiler = xgr.GrammarCompiler(xgr.TokenizerInfo.from_huggingface(tok, vocab_size=len(tok)))
result = {}
for name, schema in (("tool_call", TOOL_CALL_SCHEMA), ("plan", COMPOSITE_PLAN_SCHEMA)):
    text = json.dumps(schema)
    grammar = xgr.Grammar.from_json_schema(text, strict_mode=True)
    compiled = compiler.compile_json_schema(text, strict_mode=True)
    # The compiled grammar must accept a real call and reject a schema violation.
    good = {"name": "ripgrep_search", "arguments": {"pattern": "TODO", "pcre2": False}}
    if name == "plan":
        good = {"steps": [{"call": good}]}
    bad = {"name": "ripgrep_search", "arguments": {"pattern": "TODO", "bogus": 1}}
    if name == "plan":
        bad = {"steps": [{"call": bad}]}
    accepts_good = xgr.testing._is_grammar_accept_string(grammar, json.dumps(good, separators=(",", ":")))
    accepts_bad = xgr.testing._is_grammar_accept_string(grammar, json.dumps(bad, separators=(",", ":")))
    result[name] = {"vllm_refuses": has_xgrammar_unsupported_json_features(schema), "rules": len(str(grammar).splitlines()), "good": accepts_good, "bad": accepts_bad,
                    "memory": compiled.memory_size_bytes}
print("MARK" + json.dumps(result), flush=True)
""".replace("MARK", MARK)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_model_dir(tmp_path_factory)


@pytest.mark.timeout(300)
def test_tool_call_and_plan_schemas_compile_in_xgrammar(tiny_model: Path) -> None:
    proc = run_in_vllm_env(SNIPPET, timeout=280, env_extra={"TINY_MODEL": str(tiny_model)})
    assert proc.returncode == 0, proc.stderr[-4000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith(MARK))
    result = json.loads(line[len(MARK) :])
    for name in ("tool_call", "plan"):
        # vLLM checks schemas before handing them to xgrammar; a refusal means no guided decoding.
        assert result[name]["vllm_refuses"] is False, f"{name}: vLLM refuses it for xgrammar"
        assert result[name]["rules"] > 1, result
        assert result[name]["good"] is True, f"{name}: xgrammar rejects a valid call"
        assert result[name]["bad"] is False, f"{name}: xgrammar accepts an unknown field"
