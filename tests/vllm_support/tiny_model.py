"""Build a tiny, random-weight Qwen2 causal LM that the real vLLM can load.

Nothing is downloaded: the byte-level BPE tokenizer is trained on an in-code
corpus with `tokenizers`, the weights are seeded random, and everything is
written as a normal Hugging Face model directory (config.json,
model.safetensors, tokenizer.json, tokenizer_config.json with a ChatML chat
template, generation_config.json).

Runs INSIDE the vLLM venv (needs torch, transformers, tokenizers, safetensors):

    $VLLM_PY -m tests.vllm_support.tiny_model DEST      # prints DEST

Shape notes: head_dim must be 64 (vLLM's CPU attention rejects 16);
2 KV heads so tensor_parallel_size=2 splits evenly.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

SEED = 1234
TARGET_VOCAB = 4096
HIDDEN = 128
HEADS = 2
KV_HEADS = 2
HEAD_DIM = 64
LAYERS = 2
INTERMEDIATE = 256
MAX_POS = 2048

ENDOFTEXT = "<|endoftext|>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
SPECIAL_TOKENS = [ENDOFTEXT, IM_START, IM_END]  # ids 0, 1, 2

# ChatML with tools, as Qwen2.5's template renders them (Hermes style): the tools as JSON in
# <tools></tools> in the system turn, assistant calls as <tool_call>{json}</tool_call>, tool
# results as <tool_response> in a user turn. Without tools it is plain ChatML.
CHAT_TEMPLATE = r"""{%- if tools %}
{{- '<|im_start|>system\n' }}
{%- if messages[0].role == 'system' %}{{- messages[0].content + '\n\n' }}{%- endif %}
{{- '# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>' }}
{%- for tool in tools %}{{- '\n' + (tool | tojson) }}{%- endfor %}
{{- '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' }}
{%- elif messages[0].role == 'system' %}
{{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == 'user' or (message.role == 'system' and not loop.first) or (message.role == 'assistant' and not message.tool_calls) %}
{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
{%- elif message.role == 'assistant' %}
{{- '<|im_start|>assistant' }}
{%- if message.content %}{{- '\n' + message.content }}{%- endif %}
{%- for tool_call in message.tool_calls %}
{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}
{{- '\n<tool_call>\n{"name": "' + tool_call.name + '", "arguments": ' + (tool_call.arguments | tojson) + '}\n</tool_call>' }}
{%- endfor %}
{{- '<|im_end|>\n' }}
{%- elif message.role == 'tool' %}
{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}
{{- '\n<tool_response>\n' + message.content + '\n</tool_response>' }}
{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{- '<|im_end|>\n' }}{%- endif %}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}
"""

_WORDS_TEXT = (
    "ripgrep rg ast-grep sg search find grep pattern regex glob path file files "
    "directory dir repo repository code query match matches line lines column "
    "function def class method import from return async await self cls lambda "
    "struct impl fn pub let mut const var type interface enum trait module package "
    "tool tools tool_call tool_calls arguments name description parameters properties "
    "required string integer number boolean array object null true false items "
    "enum maxLength minLength additionalProperties schema json answer reasoning "
    "user assistant system content role message messages think plan result results "
    "error errors warning todo fixme test tests main src lib utils config settings "
    "python rust go javascript typescript java cpp c ruby kind rule context before "
    "after count only ignore hidden case insensitive smart word fixed strings "
    "max depth type-add include exclude language lang yaml toml md txt py rs ts js "
    "the a an of to in for on with and or not is are this that it be by as at"
)
_WORDS = _WORDS_TEXT.split()

_FLAGS_TEXT = (
    "-n -i -w -l -c -F -e -g -t -T -A -B -C -S -u --json --glob --type --max-count "
    "--files-with-matches --fixed-strings --ignore-case --word-regexp --pattern "
    "--lang --rule --context --hidden --no-ignore --count --files --max-depth"
)
_FLAGS = _FLAGS_TEXT.split()

_PUNCT = [*"{}[]():;,.\"'`/\\|*+?^$<>=!&%#@~-_", "\\n", "\\t", "\\\\", '\\"']


def _corpus(rng: random.Random) -> list[str]:
    """A small deterministic corpus: JSON tool calls, shell lines, code, prose."""
    lines: list[str] = []
    for _ in range(3000):
        w = rng.sample(_WORDS, 6)
        flag = rng.choice(_FLAGS)
        num = rng.randint(0, 999)
        pat = rng.choice(
            [
                f"def {w[0]}_{w[1]}\\(",
                f"class {w[0].title()}{w[1].title()}",
                f"{w[0]}\\s+{w[1]}",
                f"fn {w[0]}($$$ARGS)",
                f"import {w[0]}",
                "TODO|FIXME",
                f"^{w[0]}.*{w[1]}$",
            ]
        )
        obj = {
            "name": rng.choice(["ripgrep", "ast_grep", "answer", "search"]),
            "arguments": {
                "pattern": pat,
                "path": f"src/{w[2]}/{w[3]}.py",
                rng.choice(["glob", "type", "lang"]): rng.choice(["*.py", "rust", "py", "ts"]),
                "max_count": num,
                "ignore_case": rng.choice([True, False]),
                "kind": rng.choice(["search", "answer", "plan"]),
                "items": [w[4], w[5]],
                "note": None,
            },
        }
        lines.append(json.dumps(obj, separators=(rng.choice([",", ", "]), rng.choice([":", ": "]))))
        lines.append(f"rg {flag} '{pat}' src/{w[2]} | head -n {num}")
        lines.append(f"sg --pattern '{w[0]}($A)' --lang {rng.choice(['py', 'rs', 'ts'])} {w[3]}/")
        lines.append(f"def {w[0]}_{w[1]}(self, {w[2]}: str, {w[3]}: int = {num}) -> dict:")
        lines.append(f"    return {{'{w[4]}': {w[2]}, '{w[5]}': [{num}, {num + 1}]}}")
        lines.append(" ".join(rng.choice(_WORDS) for _ in range(12)) + rng.choice(".?!:"))
        lines.append("".join(rng.choice(_PUNCT) for _ in range(8)))
        lines.append(
            f'{{"type": "object", "properties": {{"{w[0]}": {{"type": "string", '
            f'"maxLength": {num}}}}}, "required": ["{w[0]}"], '
            f'"additionalProperties": false}}'
        )
    return lines


def _train_tokenizer() -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=TARGET_VOCAB,
        min_frequency=2,
        show_progress=False,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(_corpus(random.Random(SEED)), trainer=trainer)
    return tok


def _write_json(path: Path, obj: dict[str, Any]) -> None:
    path.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def build_tiny_qwen2(dest: Path) -> Path:
    """Build the tiny model into ``dest`` (created; existing files overwritten).

    Returns ``dest``. Deterministic: the same code gives byte-identical files.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch
    from safetensors.torch import save_file

    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)

    # --- tokenizer ---------------------------------------------------------
    tok = _train_tokenizer()
    ids = {t: tok.token_to_id(t) for t in SPECIAL_TOKENS}
    assert ids == {ENDOFTEXT: 0, IM_START: 1, IM_END: 2}, ids
    tok.save(str(dest / "tokenizer.json"))
    n_tok = tok.get_vocab_size(with_added_tokens=True)
    vocab = ((n_tok + 63) // 64) * 64  # pad the embedding to a multiple of 64

    added = {
        str(i): {
            "content": t,
            "lstrip": False,
            "normalized": False,
            "rstrip": False,
            "single_word": False,
            "special": True,
        }
        for t, i in ids.items()
    }
    _write_json(
        dest / "tokenizer_config.json",
        {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "added_tokens_decoder": added,
            "additional_special_tokens": [IM_START, IM_END],
            "bos_token": None,
            "eos_token": IM_END,
            "pad_token": ENDOFTEXT,
            "unk_token": None,
            "chat_template": CHAT_TEMPLATE,
            "clean_up_tokenization_spaces": False,
            "errors": "replace",
            "model_max_length": MAX_POS,
            "split_special_tokens": False,
        },
    )
    _write_json(
        dest / "special_tokens_map.json",
        {
            "additional_special_tokens": [IM_START, IM_END],
            "eos_token": IM_END,
            "pad_token": ENDOFTEXT,
        },
    )

    # --- config ------------------------------------------------------------
    config = {
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "vocab_size": vocab,
        "hidden_size": HIDDEN,
        "intermediate_size": INTERMEDIATE,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS,
        "head_dim": HEAD_DIM,
        "hidden_act": "silu",
        "max_position_embeddings": MAX_POS,
        "max_window_layers": LAYERS,
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
        "rope_scaling": None,
        "sliding_window": None,
        "use_sliding_window": False,
        "attention_dropout": 0.0,
        "initializer_range": 0.02,
        "tie_word_embeddings": True,
        "use_cache": True,
        "bos_token_id": ids[ENDOFTEXT],
        "eos_token_id": ids[IM_END],
        "pad_token_id": ids[ENDOFTEXT],
        "torch_dtype": "float32",
    }
    _write_json(dest / "config.json", config)
    _write_json(
        dest / "generation_config.json",
        {
            "bos_token_id": ids[ENDOFTEXT],
            "eos_token_id": [ids[IM_END], ids[ENDOFTEXT]],
            "pad_token_id": ids[ENDOFTEXT],
        },
    )

    # --- weights (HF Qwen2 names; lm_head tied to embed_tokens) ------------
    g = torch.Generator().manual_seed(SEED)

    def normal(*shape: int) -> torch.Tensor:
        return (torch.randn(*shape, generator=g) * 0.02).contiguous()

    q_out, kv_out = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    tensors: dict[str, torch.Tensor] = {"model.embed_tokens.weight": normal(vocab, HIDDEN)}
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        tensors.update(
            {
                p + "input_layernorm.weight": torch.ones(HIDDEN),
                p + "post_attention_layernorm.weight": torch.ones(HIDDEN),
                p + "self_attn.q_proj.weight": normal(q_out, HIDDEN),
                p + "self_attn.q_proj.bias": torch.zeros(q_out),
                p + "self_attn.k_proj.weight": normal(kv_out, HIDDEN),
                p + "self_attn.k_proj.bias": torch.zeros(kv_out),
                p + "self_attn.v_proj.weight": normal(kv_out, HIDDEN),
                p + "self_attn.v_proj.bias": torch.zeros(kv_out),
                p + "self_attn.o_proj.weight": normal(HIDDEN, q_out),
                p + "mlp.gate_proj.weight": normal(INTERMEDIATE, HIDDEN),
                p + "mlp.up_proj.weight": normal(INTERMEDIATE, HIDDEN),
                p + "mlp.down_proj.weight": normal(HIDDEN, INTERMEDIATE),
            }
        )
    tensors["model.norm.weight"] = torch.ones(HIDDEN)
    save_file(tensors, str(dest / "model.safetensors"), metadata={"format": "pt"})
    return dest


def fingerprint(dest: Path) -> str:
    """sha256 over the built files (for determinism checks)."""
    h = hashlib.sha256()
    for f in sorted(Path(dest).iterdir()):
        if f.is_file():
            h.update(f.name.encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0] in {"-h", "--help"}:
        print("usage: python -m tests.vllm_support.tiny_model DEST", file=sys.stderr)
        return 2
    print(build_tiny_qwen2(Path(argv[0])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
