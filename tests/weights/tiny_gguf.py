"""Write a tiny, random-weight Qwen2 GGUF that transformers can read: the fast conversion test's
input (a real GGUF is 100 MB and takes half a minute to convert on two cores).

Runs INSIDE the vLLM venv (needs numpy and gguf):

    $VLLM_PY tests/weights/tiny_gguf.py DEST.gguf [ARCHITECTURE]

With an ARCHITECTURE other than qwen2 it writes only the header's metadata, no tensors: a GGUF of
an architecture transformers cannot load.
"""

from __future__ import annotations

import sys

import gguf
import numpy as np

HIDDEN = 64
HEADS = 1
KV_HEADS = 1
LAYERS = 1
INTERMEDIATE = 128
# byte-level BPE: the 256 byte symbols, a few merges, the ChatML specials
BYTES = [chr(c) for c in range(33, 127)] + [chr(c) for c in range(161, 256)]
BYTES += [chr(256 + i) for i in range(256 - len(BYTES))]
MERGES = ["r g", "a s", "Ġ r"]
TOKENS = (
    BYTES + [m.replace(" ", "") for m in MERGES] + ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
)
TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def main(dest: str, arch: str = "qwen2") -> None:
    w = gguf.GGUFWriter(dest, arch)
    w.add_name("tiny-test")
    if arch == "qwen2":
        rng = np.random.default_rng(7)
        vocab = len(TOKENS)
        w.add_context_length(256)
        w.add_embedding_length(HIDDEN)
        w.add_block_count(LAYERS)
        w.add_feed_forward_length(INTERMEDIATE)
        w.add_head_count(HEADS)
        w.add_head_count_kv(KV_HEADS)
        w.add_rope_freq_base(10000.0)
        w.add_layer_norm_rms_eps(1e-6)
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre("qwen2")
        w.add_token_list(TOKENS)
        w.add_token_merges(MERGES)
        w.add_token_types([1] * (vocab - 3) + [3, 3, 3])
        w.add_bos_token_id(vocab - 3)
        w.add_eos_token_id(vocab - 1)
        w.add_chat_template(TEMPLATE)

        def t(name: str, *shape: int) -> None:
            w.add_tensor(name, rng.standard_normal(shape).astype(np.float32) * 0.02)

        t("token_embd.weight", vocab, HIDDEN)
        t("output_norm.weight", HIDDEN)
        t("output.weight", vocab, HIDDEN)
        for i in range(LAYERS):
            b = f"blk.{i}."
            t(b + "attn_norm.weight", HIDDEN)
            t(b + "attn_q.weight", HIDDEN, HIDDEN)
            t(b + "attn_q.bias", HIDDEN)
            t(b + "attn_k.weight", HIDDEN // HEADS * KV_HEADS, HIDDEN)
            t(b + "attn_k.bias", HIDDEN // HEADS * KV_HEADS)
            t(b + "attn_v.weight", HIDDEN // HEADS * KV_HEADS, HIDDEN)
            t(b + "attn_v.bias", HIDDEN // HEADS * KV_HEADS)
            t(b + "attn_output.weight", HIDDEN, HIDDEN)
            t(b + "ffn_norm.weight", HIDDEN)
            t(b + "ffn_gate.weight", INTERMEDIATE, HIDDEN)
            t(b + "ffn_up.weight", INTERMEDIATE, HIDDEN)
            t(b + "ffn_down.weight", HIDDEN, INTERMEDIATE)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
