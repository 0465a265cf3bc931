"""Model presets for the app and the CLI: published facts, plus arithmetic that says how it was done.

The facts (parameter counts, layers, attention heads, context lengths) are copied from each model's
card on Hugging Face, linked in `source`. Nothing here is a benchmark: how many GPUs a model needs is
*derived* (`min_tensor_parallel`) from the size of its bf16 weights and the GPU's memory, and vLLM's
rule that the tensor-parallel size divides the number of attention heads. Treat it as a starting
point; the KV cache for long contexts needs more.
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
