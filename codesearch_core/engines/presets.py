"""Model presets for the app and the CLI: published facts, plus arithmetic that says how it was done.

The facts (parameter counts, layers, attention heads, context lengths) are copied from each model's
card on Hugging Face, linked in `source`, and so is how each model calls tools: its tool format
(`tool_format.py`: the syntax its chat template teaches, and the vLLM `--tool-call-parser` that
reads it) and the chat-template switches it needs (Qwen3's thinking mode off: a search call needs
no reasoning trace, and `<think>` would sit where the grammar wants the call).

Nothing here is a benchmark: how many GPUs a model needs is *derived* (`min_tensor_parallel`) from
the size of its bf16 weights and the GPU's memory, and vLLM's rule that the tensor-parallel size
divides the number of attention heads. Treat it as a starting point; the KV cache for long
contexts needs more. `max_model_len` is what a code-search prompt needs (tools, a few examples, an
intent and a call fit in 8k), not the model's limit: a shorter context leaves memory for batches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from codesearch_core.errors import EngineError

BYTES_PER_PARAM_BF16: Final = 2
GIB: Final = 1024**3
#: Share of the usable GPU memory the weights may take; the rest is KV cache and activations.
WEIGHT_SHARE: Final = 0.8


@dataclass(frozen=True, slots=True)
class ModelPreset:
    """One model as its card describes it. `active_params_b` is set for mixture-of-experts models."""

    key: str
    hf_id: str
    params_b: float
    layers: int
    attention_heads: int
    kv_heads: int
    context_tokens: int  # what config.json is set up for
    max_context_tokens: int  # with the card's YaRN rope scaling
    source: str
    active_params_b: float | None = None
    notes: str = ""
    tool_format: str = "hermes"
    chat_template_kwargs: tuple[tuple[str, object], ...] = ()
    max_model_len: int = 8192
    dtype: str = "bfloat16"
    temperature: float = 0.7
    top_p: float = 0.8

    @property
    def chat_template_options(self) -> dict[str, object]:
        return dict(self.chat_template_kwargs)

    @property
    def weights_gib(self) -> float:
        """Size of the bf16 weights."""
        return self.params_b * 1e9 * BYTES_PER_PARAM_BF16 / GIB


PRESETS: Final[tuple[ModelPreset, ...]] = (
    ModelPreset(
        key="qwen2.5-coder-7b",
        hf_id="Qwen/Qwen2.5-Coder-7B-Instruct",
        params_b=7.61,
        layers=28,
        attention_heads=28,
        kv_heads=4,
        context_tokens=32_768,
        max_context_tokens=131_072,
        source="https://huggingface.co/Qwen/Qwen2.5-Coder-7B-Instruct",
        notes="config.json is set for 32,768 tokens; 131,072 needs YaRN rope scaling (factor 4)",
    ),
    ModelPreset(
        key="qwen2.5-coder-14b",
        hf_id="Qwen/Qwen2.5-Coder-14B-Instruct",
        params_b=14.7,
        layers=48,
        attention_heads=40,
        kv_heads=8,
        context_tokens=32_768,
        max_context_tokens=131_072,
        source="https://huggingface.co/Qwen/Qwen2.5-Coder-14B-Instruct",
        notes="config.json is set for 32,768 tokens; 131,072 needs YaRN rope scaling (factor 4)",
    ),
    ModelPreset(
        key="qwen2.5-coder-32b",
        hf_id="Qwen/Qwen2.5-Coder-32B-Instruct",
        params_b=32.5,
        layers=64,
        attention_heads=40,
        kv_heads=8,
        context_tokens=32_768,
        max_context_tokens=131_072,
        source="https://huggingface.co/Qwen/Qwen2.5-Coder-32B-Instruct",
        notes="config.json is set for 32,768 tokens; 131,072 needs YaRN rope scaling (factor 4)",
    ),
    ModelPreset(
        key="qwen3-coder-30b-a3b",
        hf_id="Qwen/Qwen3-Coder-30B-A3B-Instruct",
        params_b=30.5,
        active_params_b=3.3,
        layers=48,
        attention_heads=32,
        kv_heads=4,
        context_tokens=262_144,
        max_context_tokens=1_048_576,
        source="https://huggingface.co/Qwen/Qwen3-Coder-30B-A3B-Instruct",
        notes="mixture of experts: 128 experts, 8 active; non-thinking only; 1M context with YaRN",
    ),
    ModelPreset(
        key="qwen3-8b",
        hf_id="Qwen/Qwen3-8B",
        params_b=8.2,
        layers=36,
        attention_heads=32,
        kv_heads=8,
        context_tokens=32_768,
        max_context_tokens=131_072,
        source="https://huggingface.co/Qwen/Qwen3-8B",
        notes="thinking turned off (enable_thinking=False); the card's non-thinking sampling",
        chat_template_kwargs=(("enable_thinking", False),),
    ),
    ModelPreset(
        key="llama-3.1-8b",
        hf_id="meta-llama/Llama-3.1-8B-Instruct",
        params_b=8.03,
        layers=32,
        attention_heads=32,
        kv_heads=8,
        context_tokens=131_072,
        max_context_tokens=131_072,
        source="https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct",
        notes='its template asks for {"name", "parameters"} JSON (vLLM parser llama3_json)',
        tool_format="llama3_json",
        temperature=0.6,
        top_p=0.9,
    ),
    ModelPreset(
        key="xlam-2-8b",
        hf_id="Salesforce/Llama-xLAM-2-8b-fc-r",
        params_b=8.03,
        layers=32,
        attention_heads=32,
        kv_heads=8,
        context_tokens=32_768,
        max_context_tokens=131_072,
        source="https://huggingface.co/Salesforce/Llama-xLAM-2-8b-fc-r",
        notes=(
            "answers with a JSON list of calls (vLLM parser xlam); Llama 3.1 8B underneath, "
            "whose sampling defaults it keeps"
        ),
        tool_format="xlam",
        temperature=0.6,
        top_p=0.9,
    ),
    ModelPreset(
        key="qwen2.5-coder-0.5b",
        hf_id="Qwen/Qwen2.5-Coder-0.5B-Instruct",
        params_b=0.49,
        layers=24,
        attention_heads=14,
        kv_heads=2,
        context_tokens=32_768,
        max_context_tokens=32_768,
        source="https://huggingface.co/Qwen/Qwen2.5-Coder-0.5B-Instruct",
        notes="small enough for a CPU machine (about 1 GB of bf16 weights); tp 1 or 2",
    ),
)

DEFAULT_PRESET: Final = PRESETS[0]


def get_preset(key_or_id: str) -> ModelPreset:
    """A preset by its short key or its Hugging Face id."""
    for preset in PRESETS:
        if key_or_id in (preset.key, preset.hf_id):
            return preset
    known = ", ".join(p.key for p in PRESETS)
    raise EngineError(f"no preset {key_or_id!r}; known presets: {known}")


def min_tensor_parallel(
    preset: ModelPreset, gpu_memory_gib: float, gpu_memory_utilization: float = 0.9
) -> int | None:
    """The smallest tensor-parallel size whose per-GPU share of the bf16 weights leaves room for
    the KV cache, among sizes that divide the attention heads; None when even 8 GPUs are too few.
    """
    budget = gpu_memory_gib * gpu_memory_utilization * WEIGHT_SHARE
    for tp in (1, 2, 4, 8):
        if preset.attention_heads % tp == 0 and preset.weights_gib / tp <= budget:
            return tp
    return None
