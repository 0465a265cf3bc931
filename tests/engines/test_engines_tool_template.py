"""The project's tool template: one rendering of tools and calls for a model whose chat template
drops them, the same for a training layout, the vLLM engine's prompts and the gym's agent turns.

The first tests need no model. The rest run in the vLLM venv with the tiny random Qwen2 (whose
template is Qwen2.5's, with tools) and a copy of it whose template is SmolLM2-135M-Instruct's
kind: role and content, nothing about `tools` or `tool_calls`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from codesearch_core.corpora import load_seed_blueprints
from codesearch_core.engines import (
    PROJECT_TOOL_FORMAT,
    build_messages,
    read_call,
    tool_template_messages,
)
from codesearch_core.tools import OPENAI_TOOLS
from tests.vllm_support.env import run_in_vllm_env, skip_reason, tiny_model_dir, vllm_python

#: SmolLM2-135M-Instruct's template, as its tokenizer_config.json ships it: no `tools` anywhere.
NO_TOOLS_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + "
    "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def conversation(*, string_arguments: bool) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A seed's prompt, its reference call as the assistant turn (the hf-chat layout holds the
    arguments as a dict, the OpenAI one as a JSON string) and a tool result."""
    bp = load_seed_blueprints()[0]
    call = bp.reference_call.to_dict()
    arguments = json.dumps(call["arguments"]) if string_arguments else call["arguments"]
    messages = [
        *build_messages(bp.intent, template_tools=True),
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "abc123def",
                    "type": "function",
                    "function": {"name": call["name"], "arguments": arguments},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "abc123def", "content": "a.c:1:found"},
        {"role": "tool", "tool_call_id": "abc123def", "content": "b.c:2:found"},
    ]
    return messages, call


def test_tools_go_into_the_system_message_and_calls_into_text_the_engines_read_back() -> None:
    messages, call = conversation(string_arguments=False)
    plain = tool_template_messages(messages, OPENAI_TOOLS)
    assert [m["role"] for m in plain] == ["system", "user", "assistant", "user"]
    assert all(set(m) == {"role", "content"} for m in plain)
    system = plain[0]["content"]
    assert system.startswith(messages[0]["content"])  # eval's rules first, then the tools
    tools = system[system.index("<tools>\n") + 8 : system.index("\n</tools>")].splitlines()
    assert [json.loads(line) for line in tools] == OPENAI_TOOLS
    compact = [json.dumps(t, separators=(",", ":"), ensure_ascii=False) for t in OPENAI_TOOLS]
    assert tools == compact
    assert "<tool_call>" in system and "</tool_call>" in system
    # The call is what the engine's grammar lets the model write (Hermes, compact JSON), and the
    # engines read it back as the same call.
    body = json.dumps(call, separators=(",", ":"), ensure_ascii=False)
    assert plain[2]["content"] == f"<tool_call>\n{body}\n</tool_call>"
    read = read_call(plain[2]["content"], tool_format=PROJECT_TOOL_FORMAT)
    assert read.call is not None and read.call.to_dict() == call and read.repairs == ()
    # Both tool results in one user turn, so user and assistant still alternate.
    assert plain[3]["content"] == (
        "<tool_response>\na.c:1:found\n</tool_response>\n"
        "<tool_response>\nb.c:2:found\n</tool_response>"
    )


def test_the_openai_layouts_string_arguments_render_as_the_hf_layouts_dict() -> None:
    as_dict, _ = conversation(string_arguments=False)
    as_string, _ = conversation(string_arguments=True)
    assert tool_template_messages(as_string, OPENAI_TOOLS) == tool_template_messages(
        as_dict, OPENAI_TOOLS
    )


def test_a_conversation_without_a_system_message_gets_one_with_the_tools() -> None:
    plain = tool_template_messages([{"role": "user", "content": "find x"}], OPENAI_TOOLS)
    assert plain[0]["role"] == "system" and plain[0]["content"].startswith("# Tools")
    assert plain[1] == {"role": "user", "content": "find x"}


# --- with real tokenizers and vLLM -----------------------------------------------------------

MARK = "RESULT "


@pytest.fixture(scope="session")
def models(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The tiny Qwen2 (its template shows tools) and a copy whose template drops them."""
    tiny = tiny_model_dir(tmp_path_factory)
    plain = Path(tmp_path_factory.getbasetemp()) / "vllm-tiny-no-tools"
    if not (plain / "config.json").is_file():
        shutil.copytree(tiny, plain)
        config = json.loads((plain / "tokenizer_config.json").read_text(encoding="utf-8"))
        config["chat_template"] = NO_TOOLS_TEMPLATE
        (plain / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return tiny, plain


def run(code: str, tiny: Path, plain: Path, *, timeout: float = 300) -> Any:
    prelude = (
        "import json, os\nTINY, PLAIN = os.environ['TINY'], os.environ['PLAIN']\n"
        "def report(value):\n    print('RESULT ' + json.dumps(value), flush=True)\n"
    )
    proc = run_in_vllm_env(prelude + code, env_extra={"TINY": str(tiny), "PLAIN": str(plain)},
                           in_process=True, timeout=timeout)  # fmt: skip
    lines = [line for line in proc.stdout.splitlines() if line.startswith(MARK)]
    assert proc.returncode == 0 and lines, f"{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    return json.loads(lines[-1][len(MARK) :])


TOKENIZERS = """
from transformers import AutoTokenizer
from codesearch_core.corpora import load_seed_blueprints
from codesearch_core.engines import renders_tools, tool_template_messages
from codesearch_core.export.formats import prompt_messages
from codesearch_core.tools import OPENAI_TOOLS
bp = load_seed_blueprints()[0]
call = bp.reference_call.to_dict()
record = [*prompt_messages(bp.intent), {"role": "assistant", "content": "", "tool_calls": [
    {"id": "abc123def", "type": "function", "function": call}]}]
qwen, smol = AutoTokenizer.from_pretrained(TINY), AutoTokenizer.from_pretrained(PLAIN)
dropped = smol.apply_chat_template(record, tools=OPENAI_TOOLS, tokenize=False)
rendered = smol.apply_chat_template(tool_template_messages(record, OPENAI_TOOLS), tokenize=False)
report({"qwen": renders_tools(qwen), "smol": renders_tools(smol),
        "smol_with_qwens_template": renders_tools(smol, qwen.chat_template),
        "dropped": dropped, "rendered": rendered})
"""


@pytest.mark.vllm
@pytest.mark.skipif(vllm_python() is None, reason=skip_reason())
def test_a_template_that_drops_tools_is_told_apart_and_renders_the_projects_template(
    models: tuple[Path, Path],
) -> None:
    result = run(TOKENIZERS, *models)
    assert (result["qwen"], result["smol"], result["smol_with_qwens_template"]) == (
        True, False, True)  # fmt: skip
    bp = load_seed_blueprints()[0]
    call = json.dumps(bp.reference_call.to_dict(), separators=(",", ":"), ensure_ascii=False)
    # What a user met: the model's own template shows neither the tools nor the call.
    assert '"parameters"' not in result["dropped"] and "<tool_call>" not in result["dropped"]
    rendered = result["rendered"]
    assert rendered.startswith("<|im_start|>system\nYou turn a code-search request")
    assert "<tools>\n" in rendered and f"<tool_call>\n{call}\n</tool_call><|im_end|>" in rendered


ENGINE = """
from codesearch_core.corpora import load_seed_blueprints
from codesearch_core.engines import SamplingSettings, VllmSettings, build_messages, get_vllm_engine
from codesearch_core.engines import shutdown_vllm_engine, tool_template_messages
from codesearch_core.engines.base import proposal_to_dict
from codesearch_core.export.formats import prompt_messages
from codesearch_core.gym import DEFAULT_SETTINGS, VllmChat, gym_tools, prompt_messages as opening
from codesearch_core.tools import OPENAI_TOOLS
bp = min(load_seed_blueprints(), key=lambda b: len(b.intent))
out = {}
for name, model in (("qwen", TINY), ("smol", PLAIN)):
    engine = get_vllm_engine(VllmSettings(model=model, tensor_parallel_size=1, max_model_len=2048))
    (p,) = engine.propose([bp], settings=SamplingSettings(temperature=0, max_tokens=200))
    chat = VllmChat(engine, SamplingSettings())
    agent = chat.conversation(opening(bp, DEFAULT_SETTINGS), gym_tools())
    chat.close()
    out[name] = {"notices": list(engine.notices), "proposal": proposal_to_dict(p),
                 "tools_passed": "tools" in engine.chat_arguments(), "agent": agent,
                 "export": prompt_messages(bp.intent),
                 "project": tool_template_messages(prompt_messages(bp.intent), OPENAI_TOOLS),
                 "agent_project": tool_template_messages(opening(bp, DEFAULT_SETTINGS),
                                                         gym_tools())}
shutdown_vllm_engine()
report(out)
os._exit(0)
"""


@pytest.mark.vllm
@pytest.mark.skipif(vllm_python() is None, reason=skip_reason())
def test_vllm_asks_each_model_in_the_prompt_its_training_data_holds(
    models: tuple[Path, Path],
) -> None:
    """One vLLM smoke run per template: eager on the CPU by default (a start in seconds), the
    stored prompt equal to the exported training prompt, through the model's template when it
    shows tools and through the project's when it drops them; the agent's turns likewise."""
    result = run(ENGINE, *models, timeout=600)
    qwen, smol = result["qwen"], result["smol"]
    for side in (qwen, smol):
        assert any(n.startswith("CPU: eager mode") for n in side["notices"]), side["notices"]
        assert side["proposal"]["raw_text"].startswith("<tool_call>\n")  # Hermes, by the grammar
        assert side["proposal"]["sampling"]["tool_format"] == "hermes"
    # The Qwen template shows tools: the prompt is the export's, the tools passed beside it.
    assert json.loads(qwen["proposal"]["prompt"]) == qwen["export"] and qwen["tools_passed"]
    assert "<tools>" not in qwen["agent"][0]["content"]
    assert not any("project's tool template" in n for n in qwen["notices"])
    # The SmolLM2-like template drops them: the project's template, said in a notice.
    assert json.loads(smol["proposal"]["prompt"]) == smol["project"] and not smol["tools_passed"]
    assert smol["proposal"]["sampling"]["tool_template"] == "project"
    assert any("project's tool template" in n for n in smol["notices"]), smol["notices"]
    assert smol["agent"] == smol["agent_project"] and "<tools>" in smol["agent"][0]["content"]
