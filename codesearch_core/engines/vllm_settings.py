"""What the in-process vLLM engine is built with (`VllmSettings`), apart from the engine itself
(`vllm_engine.py`): two engines with equal settings are the same engine, so the settings are a
frozen value checked when made, and `llm_kwargs` turns them into `vllm.LLM`'s arguments (before
the machine's defaults, `vllm_platform.platform_defaults`). Importing it never imports vLLM.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from codesearch_core.engines.tool_format import DEFAULT_TOOL_FORMAT, ToolFormat, get_tool_format
from codesearch_core.engines.tool_template import PROJECT_TOOL_FORMAT
from codesearch_core.engines.vllm_context import DEFAULT_MAX_MODEL_LEN
from codesearch_core.errors import EngineError

#: Which chat template shows the model its tools (`VllmSettings.tool_template`).
TOOL_TEMPLATES: Final = ("auto", "model", "project")


@dataclass(frozen=True, slots=True)
class VllmSettings:
    """What `vllm.LLM` is built with; two engines with equal settings are the same engine.

    `batch_size` is how many blueprints go into one `LLM.chat` call: the whole run is one batch
    for speed, but progress and stop requests are only seen between batches.

    `compact_json` makes the grammar allow no whitespace between JSON tokens: legal whitespace
    costs tokens, and weak models fill it. vLLM reads that flag only at engine level and only with
    an explicit grammar backend, so `grammar_backend="auto"` is resolved here the way vLLM would:
    xgrammar when vLLM accepts the schema for it, else guidance.
    """

    model: str
    tensor_parallel_size: int = 2
    pipeline_parallel_size: int = 1
    gpu_memory_utilization: float = 0.9
    #: None: DEFAULT_MAX_MODEL_LEN, or the model's own limit when that is smaller.
    max_model_len: int | None = None
    dtype: str = "auto"
    #: None: eager on a CPU (start in seconds; `platform_defaults`), compiled on a GPU.
    enforce_eager: bool | None = None
    seed: int = 0
    trust_remote_code: bool = False
    batch_size: int = 256
    compact_json: bool = True
    grammar_backend: str = "auto"
    tool_format: str = DEFAULT_TOOL_FORMAT
    #: auto: the project's tool template when the model's chat template drops the tools;
    #: model: always the model's own; project: always the project's.
    tool_template: str = "auto"
    #: A chat template (file path or template text) instead of the model's own.
    chat_template: str | None = None
    chat_template_kwargs: tuple[tuple[str, Any], ...] = field(default=())
    #: KV cache size; None: vLLM's memory fraction on a GPU, CPU_KV_CACHE_GIB on a CPU.
    kv_cache_gib: float | None = None
    extra_kwargs: tuple[tuple[str, Any], ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.model:
            raise EngineError("give a model: a Hugging Face id or a local model directory")
        if self.tensor_parallel_size < 1 or self.pipeline_parallel_size < 1:
            raise EngineError("tensor_parallel_size and pipeline_parallel_size must be at least 1")
        if not 0.0 < self.gpu_memory_utilization <= 1.0:
            raise EngineError(
                f"gpu_memory_utilization must be in (0, 1], got {self.gpu_memory_utilization}"
            )
        if (self.max_model_len is not None and self.max_model_len < 16) or self.batch_size < 1:
            raise EngineError("max_model_len must be at least 16 and batch_size at least 1")
        if self.kv_cache_gib is not None and self.kv_cache_gib <= 0:
            raise EngineError(f"kv_cache_gib must be positive, got {self.kv_cache_gib}")
        if self.grammar_backend not in ("auto", "xgrammar", "guidance"):
            raise EngineError(
                f"grammar_backend must be auto, xgrammar or guidance, got {self.grammar_backend!r}"
            )
        if self.tool_template not in TOOL_TEMPLATES:
            raise EngineError(
                f"tool_template must be one of {', '.join(TOOL_TEMPLATES)}, got {self.tool_template!r}"
            )
        tool_format = get_tool_format(self.tool_format)
        if tool_format.begin and self.grammar_backend == "guidance":
            # guidance takes only the legacy structural tag, which cannot force a call.
            raise EngineError(
                f"tool format {tool_format.name} is constrained by a structural tag, which "
                "needs the xgrammar backend: use --grammar-backend xgrammar (or auto)"
            )

    @property
    def format(self) -> ToolFormat:
        """The syntax asked for: `tool_format`, or the project's tool template's when forced
        (`auto` finds out only once the model's template is read, `VllmEngine.tool_format`)."""
        if self.tool_template == "project":
            return PROJECT_TOOL_FORMAT
        return get_tool_format(self.tool_format)

    def llm_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for `vllm.LLM` (before `platform_defaults`)."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "tensor_parallel_size": self.tensor_parallel_size,
            "pipeline_parallel_size": self.pipeline_parallel_size,
            "gpu_memory_utilization": self.gpu_memory_utilization,
            "max_model_len": self.max_model_len or DEFAULT_MAX_MODEL_LEN,
            "dtype": self.dtype,
            "seed": self.seed,
            "trust_remote_code": self.trust_remote_code,
        }
        if self.enforce_eager is not None:
            kwargs["enforce_eager"] = self.enforce_eager
        backend = self.grammar_backend
        if backend == "auto" and (self.compact_json or self.format.begin):
            backend = (
                "xgrammar" if self.format.begin else grammar_backend_for(self.format.call_schema())
            )
        if self.compact_json:
            kwargs["structured_outputs_config"] = {
                "backend": backend,
                "disable_any_whitespace": True,
            }
        elif backend != "auto":
            kwargs["structured_outputs_config"] = {"backend": backend}
        if self.kv_cache_gib is not None:
            kwargs["kv_cache_memory_bytes"] = int(self.kv_cache_gib * 1024**3)
        kwargs.update(dict(self.extra_kwargs))
        return kwargs


def grammar_backend_for(schema: dict[str, Any]) -> str:
    """vLLM's own choice for a JSON schema: xgrammar unless it reports a feature xgrammar lacks."""
    try:
        from vllm.v1.structured_output.backend_xgrammar import (
            has_xgrammar_unsupported_json_features,
        )
    except ImportError:  # vLLM moved it (or is absent): guidance handles every schema we have
        return "guidance"
    return "guidance" if has_xgrammar_unsupported_json_features(schema) else "xgrammar"
