"""weights.convert on the real converter: a tiny random-weight Qwen2 GGUF (written with the gguf
package's own writer, in the vLLM venv) becomes a Hugging Face folder that transformers loads, with
no trace of the GGUF's quantization left in its config; a GGUF of an architecture transformers
cannot read is refused by name. Both need the vLLM venv (torch, transformers, gguf)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from weights_support import isolate

from codesearch_core.errors import ModelError
from codesearch_core.weights import add_model, list_models, read_pins, resolve_model
from tests.vllm_support.env import run_in_vllm_env, skip_reason, vllm_python

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(vllm_python() is None, reason=skip_reason()),
]

WRITER = Path(__file__).with_name("tiny_gguf.py")


def _tiny_gguf(dest: Path, architecture: str = "qwen2") -> Path:
    proc = run_in_vllm_env([str(WRITER), str(dest), architecture], timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dest


def test_a_gguf_is_converted_once_into_a_folder_transformers_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models, _ = isolate(tmp_path, monkeypatch)
    gguf = _tiny_gguf(tmp_path / "tiny.gguf")
    steps: list[str] = []
    result = add_model("tiny", str(gguf), progress=steps.append)
    pin = read_pins()["tiny"]
    assert (pin.file, pin.architecture, pin.source) == ("tiny.gguf", "qwen2", f"gguf:{gguf}")
    assert any(s.startswith("converting tiny.gguf (qwen2)") for s in steps), steps
    root = Path(resolve_model("tiny"))
    assert root == result.root == models / "tiny"
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= {
        p.name for p in root.iterdir()
    }
    config = json.loads((root / "config.json").read_text(encoding="utf-8"))
    # vLLM reads quantization_config: a de-quantized folder must not claim to be a GGUF
    assert config["model_type"] == "qwen2" and "quantization_config" not in config
    # the folder is an ordinary model: transformers loads it and its tokenizer's chat template
    check = (
        "import sys; from transformers import AutoModelForCausalLM, AutoTokenizer\n"
        "m = AutoModelForCausalLM.from_pretrained(sys.argv[1]); t = AutoTokenizer.from_pretrained(sys.argv[1])\n"
        "text = t.apply_chat_template([{'role': 'user', 'content': 'rg'}], tokenize=False, add_generation_prompt=True)\n"
        "print(type(m).__name__, sum(p.numel() for p in m.parameters()), repr(text))\n"
    )
    proc = run_in_vllm_env(["-c", check, str(root)], timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split()[0] == "Qwen2ForCausalLM"
    assert "<|im_start|>assistant" in proc.stdout
    # converted once: adding again is a no-op, and the conversion is deterministic
    assert add_model("tiny", str(gguf)).unchanged
    again = add_model("tiny", str(gguf), replace_folder=True)
    assert again.pin.result_sha256 == pin.result_sha256
    assert [i.verified for i in list_models(full=True)] == [True]
    assert sorted(p.name for p in models.iterdir()) == ["tiny"]


def test_a_gguf_of_an_architecture_transformers_cannot_load_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models, pins = isolate(tmp_path, monkeypatch)
    gguf = _tiny_gguf(tmp_path / "odd.gguf", "rwkv6")
    with pytest.raises(ModelError) as err:
        add_model("odd", str(gguf))
    message = str(err.value)
    assert "architecture 'rwkv6'" in message and "cannot load" in message
    assert "llama" in message and "nothing was added" in message  # what it can read instead
    assert os.listdir(models) == [] and not pins.exists()
