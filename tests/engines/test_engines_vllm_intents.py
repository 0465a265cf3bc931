"""Synthesis's intent-writing step on the REAL vLLM (CPU build) and the tiny random-weight model:
n samples per target, all targets of the batch in ONE `LLM.chat` call, each sample held by the
structured output to `{"intent", "difficulty"}`; the checks then keep, drop and count them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codesearch_core.models import Difficulty
from tests.vllm_support.env import run_in_vllm_env, skip_reason, tiny_model_dir, vllm_python

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(vllm_python() is None, reason=skip_reason()),
]

MARK = "RESULT "
SNIPPET = """
import json, os
from codesearch_core.engines import SamplingSettings, VllmSettings, get_vllm_engine
from codesearch_core.engines import shutdown_vllm_engine, vllm_json_sampler
from codesearch_core.models import Span
from codesearch_core.synthesis import INTENT_SCHEMA, ModelWriter, Target, TEMPLATES
from codesearch_core.tools import parse_tool_call

template = next(t for t in TEMPLATES if t.id == "call")
def target(subject, spans):
    call = parse_tool_call({"name": "ast_grep_search",
                            "arguments": {"pattern": subject + "($$$ARGS)", "language": "javascript"}})
    return Target("webshop", "call", "javascript", subject, call,
                  tuple(Span(p, a, b) for p, a, b in spans), template)
targets = [target("DB.query", [("src/server/orders.js", 1, 1), ("src/server/users.js", 1, 1)]),
           target("logger.info", [("src/server/app.js", 1, 1), ("src/server/orders.js", 2, 2)])]
engine = get_vllm_engine(VllmSettings(model=os.environ["TINY_MODEL"], tensor_parallel_size=1,
                                      max_model_len=2048, enforce_eager=True))
llm, calls = engine._llm, []
real_chat = llm.chat
def counting_chat(conversations, *args, **kwargs):
    calls.append(len(conversations))
    return real_chat(conversations, *args, **kwargs)
llm.chat = counting_chat
sampling = SamplingSettings(temperature=1.0, max_tokens=768, seed=5)
written = ModelWriter("vllm", "tiny", vllm_json_sampler(engine, INTENT_SCHEMA, sampling), n=3).write(
    targets, seed=5)
print("RESULT " + json.dumps({
    "calls": calls,
    "written": [{"intent": w.intent, "difficulty": w.difficulty.value, "samples": list(w.samples),
                 "dropped": dict(w.dropped), "prompt": w.prompt} for w in written],
}), flush=True)
shutdown_vllm_engine()
os._exit(0)
"""


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_model_dir(tmp_path_factory)


def test_intents_for_a_batch_come_from_one_generate_call_with_structured_output(
    tiny_model: Path,
) -> None:
    proc = run_in_vllm_env(
        SNIPPET, env_extra={"TINY_MODEL": str(tiny_model)}, in_process=True, timeout=400
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith(MARK)]
    assert proc.returncode == 0 and lines, proc.stderr[-4000:]
    result = json.loads(lines[-1][len(MARK) :])
    assert result["calls"] == [2]  # both targets' prompts in ONE chat call
    for written in result["written"]:
        assert len(written["samples"]) == 3  # n samples per target
        assert "DB.query" in written["prompt"] or "logger.info" in written["prompt"]
        for raw in written["samples"]:
            # Random weights: only the structured output makes this the intent object.
            value = json.loads(raw, strict=False)  # raw control characters are allowed
            assert set(value) == {"intent", "difficulty"}, raw
            assert Difficulty(value["difficulty"])
        kept = 0 if written["intent"] is None else 1
        # every sample is either usable (the best one kept) or dropped and counted
        assert sum(written["dropped"].values()) + kept <= 3
        assert kept or sum(written["dropped"].values()) == 3
