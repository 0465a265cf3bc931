"""Model presets (facts from the model cards) and the vLLM settings checks that need no vLLM."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from codesearch_core.engines.presets import PRESETS, get_preset, min_tensor_parallel
from codesearch_core.engines.vllm_engine import (
    VllmSettings,
    check_gpu_count,
    check_model_exists,
    get_vllm_engine,
)
from codesearch_core.errors import EngineError


def test_presets_are_found_by_key_and_by_hugging_face_id() -> None:
    preset = get_preset("qwen2.5-coder-32b")
    assert preset is get_preset("Qwen/Qwen2.5-Coder-32B-Instruct")
    assert (preset.params_b, preset.attention_heads, preset.kv_heads) == (32.5, 40, 8)


def test_unknown_preset_lists_the_known_ones() -> None:
    with pytest.raises(EngineError, match=r"no preset 'gpt-9'; known presets: qwen2.5-coder-7b, "):
        get_preset("gpt-9")


def test_mixture_of_experts_preset_records_active_parameters() -> None:
    preset = get_preset("qwen3-coder-30b-a3b")
    assert (preset.params_b, preset.active_params_b, preset.context_tokens) == (30.5, 3.3, 262_144)


@pytest.mark.parametrize(
    ("key", "gpu_gib", "tp"),
    [
        ("qwen2.5-coder-7b", 24, 1),
        ("qwen2.5-coder-14b", 24, 2),
        ("qwen2.5-coder-14b", 48, 1),
        ("qwen2.5-coder-32b", 80, 2),
        ("qwen2.5-coder-32b", 48, 2),
        ("qwen2.5-coder-32b", 24, 4),
        ("qwen3-coder-30b-a3b", 80, 1),
        ("qwen3-coder-30b-a3b", 48, 2),
    ],
)
def test_min_tensor_parallel_from_bf16_weights_and_gpu_memory(
    key: str, gpu_gib: int, tp: int
) -> None:
    assert min_tensor_parallel(get_preset(key), gpu_gib) == tp


def test_min_tensor_parallel_only_uses_sizes_that_divide_the_heads() -> None:
    seven_b = get_preset("qwen2.5-coder-7b")  # 28 heads: 8 does not divide them
    assert min_tensor_parallel(seven_b, 2) is None


def test_every_preset_states_its_source() -> None:
    assert all(p.source.startswith("https://huggingface.co/") for p in PRESETS)


# --- vLLM settings, checked before vLLM is imported ------------------------------------------------


def test_tp_needs_as_many_gpus_and_the_error_says_how_to_fix_it() -> None:
    check_gpu_count(2, 1, visible=2)
    with pytest.raises(EngineError) as err:
        check_gpu_count(2, 1, visible=1)
    assert str(err.value) == (
        "tensor_parallel_size=2 needs 2 GPUs but 1 is visible: set --tp 1 (or CUDA_VISIBLE_DEVICES)"
    )
    with pytest.raises(EngineError, match=r"x pipeline_parallel_size=2 needs 4 GPUs but 2 are"):
        check_gpu_count(2, 2, visible=2)


def test_a_local_model_path_must_be_a_model_directory(tmp_path: Path) -> None:
    check_model_exists("Qwen/Qwen2.5-Coder-7B-Instruct")  # an HF id is vLLM's business
    with pytest.raises(EngineError, match=r"has no config\.json"):
        check_model_exists(str(tmp_path / "missing-model"))
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    check_model_exists(str(tmp_path))


def test_settings_default_to_tp2_and_compact_json() -> None:
    settings = VllmSettings(model="m")
    kwargs = settings.llm_kwargs()
    assert kwargs["tensor_parallel_size"] == 2
    assert kwargs["structured_outputs_config"]["disable_any_whitespace"] is True
    assert kwargs["structured_outputs_config"]["backend"] in ("xgrammar", "guidance")
    extra = VllmSettings(model="m", extra_kwargs=(("kv_cache_memory_bytes", 1 << 30),))
    assert extra.llm_kwargs()["kv_cache_memory_bytes"] == 1 << 30


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"model": ""}, "give a model"),
        ({"tensor_parallel_size": 0}, "at least 1"),
        ({"gpu_memory_utilization": 1.5}, r"gpu_memory_utilization must be in \(0, 1\]"),
    ],
)
def test_bad_vllm_settings_are_refused(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(EngineError, match=message):
        VllmSettings(**{"model": "m", **overrides})  # type: ignore[arg-type]


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_without_vllm_the_engine_says_how_to_get_it() -> None:
    with pytest.raises(EngineError, match="vLLM is not installed in this environment"):
        get_vllm_engine(VllmSettings(model="Qwen/Qwen2.5-Coder-7B-Instruct"))
