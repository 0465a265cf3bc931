"""Smoke test: the real vLLM (CPU build) loads the tiny model and honours a JSON schema.

Needs the separate venv from ``bash .ci/vllm_venv.sh``; skipped without it.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.vllm_support.env import run_in_vllm_env, skip_reason, tiny_model_dir, vllm_python

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(vllm_python() is None, reason=skip_reason()),
]

SCHEMA = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "enum": ["search", "answer"]},
        "text": {"type": "string", "maxLength": 40},
    },
    "required": ["kind", "text"],
    "additionalProperties": False,
}

MARK = "@@RESULT@@"

# Runs with `python -c` in the vLLM venv (no __main__ guard needed for -c).
SNIPPET = r"""
import json, os, time
from vllm import LLM, SamplingParams
from vllm.sampling_params import StructuredOutputsParams

schema = json.loads(os.environ["SMOKE_SCHEMA"])
t0 = time.monotonic()
llm = LLM(model=os.environ["TINY_MODEL"], tensor_parallel_size=1, max_model_len=1024,
          dtype="float32", enforce_eager=True, seed=0,
          # compact JSON: random weights otherwise emit long whitespace runs
          structured_outputs_config={"backend": "xgrammar", "disable_any_whitespace": True})
start_s = time.monotonic() - t0
outs = llm.chat(
    [{"role": "system", "content": "Answer in JSON."},
     {"role": "user", "content": "Where is def main defined?"}],
    SamplingParams(max_tokens=128, n=2, temperature=1.0,
                   structured_outputs=StructuredOutputsParams(json=schema)),
    use_tqdm=False,
)
result = {
    "start_s": start_s,
    "prompt_tokens": len(outs[0].prompt_token_ids),
    "outputs": [{"text": c.text, "finish_reason": c.finish_reason} for c in outs[0].outputs],
}
llm.llm_engine.engine_core.shutdown()
print(MARK + json.dumps(result), flush=True)
os._exit(0)  # normal interpreter teardown after vLLM takes ~7 s more
""".replace("MARK", repr(MARK))


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_model_dir(tmp_path_factory)


def test_tiny_model_is_a_qwen2_dir(tiny_model: Path) -> None:
    config = json.loads((tiny_model / "config.json").read_text())
    assert config["architectures"] == ["Qwen2ForCausalLM"]
    assert config["hidden_size"] // config["num_attention_heads"] == 64
    assert config["num_key_value_heads"] == 2
    tok_cfg = json.loads((tiny_model / "tokenizer_config.json").read_text())
    assert "<|im_start|>" in tok_cfg["chat_template"]
    assert tok_cfg["eos_token"] == "<|im_end|>"


@pytest.mark.timeout(300)
def test_llm_chat_structured_json(tiny_model: Path) -> None:
    proc = run_in_vllm_env(
        SNIPPET,
        timeout=280,  # ~35 s on an idle 2-core machine; more when it is shared
        in_process=True,
        env_extra={"TINY_MODEL": str(tiny_model), "SMOKE_SCHEMA": json.dumps(SCHEMA)},
    )
    assert proc.returncode == 0, f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-6000:]}"
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(MARK)]
    assert lines, f"no result line; stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    result = json.loads(lines[-1][len(MARK) :])
    assert result["prompt_tokens"] > 0
    assert len(result["outputs"]) == 2
    for out in result["outputs"]:
        # Random weights may put raw control characters inside strings.
        obj = json.loads(out["text"], strict=False)
        jsonschema.validate(obj, SCHEMA)
        assert out["finish_reason"] in {"stop", "length"}
    # With 128 tokens of room at least one sample closes its object.
    assert any(o["finish_reason"] == "stop" for o in result["outputs"])
