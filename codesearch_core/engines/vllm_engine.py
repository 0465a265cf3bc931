"""Proposals from vLLM running in this process, with the tool-call schema enforced by the grammar.

vLLM is an optional dependency: it is imported inside functions only, so this module (and the
package) imports without it, and importing it does no work. That matters for a second reason: with
`tensor_parallel_size > 1` vLLM starts worker processes which may re-import the main script, so a
script that builds an engine must do it under `if __name__ == "__main__":`.

One engine per process: a model takes most of the GPU, so `get_vllm_engine` caches one engine and,
asked for other settings, shuts the old one down and frees its memory before building the new one.

The model is asked in its own tool format (`tool_format.py`): the tools go through its chat
template (`LLM.chat(..., tools=OPENAI_TOOLS)`), and a structural tag holds the answer to the
format's markers with the tool-call schema between them.

It starts right on a machine without a GPU, and a failed start says its real cause
(`vllm_platform.py`). A prompt longer than the context fails only its blueprint, and the default
context length is no more than the model takes (`vllm_context.py`).
"""

from __future__ import annotations

import gc
import importlib
import inspect
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from codesearch_core.engines.base import (
    ProgressFn,
    SamplingSettings,
    StopFn,
    check_n,
    failed_proposal,
    proposal_from_text,
)
from codesearch_core.engines.prompt import (
    Example,
    Message,
    PromptConfig,
    build_messages,
    messages_to_json,
)
from codesearch_core.engines.tool_format import DEFAULT_TOOL_FORMAT, ToolFormat, get_tool_format
from codesearch_core.engines.vllm_context import (
    DEFAULT_MAX_MODEL_LEN,
    default_max_model_len,
    length_error,
    prompt_lengths,
    request_error_types,
)
from codesearch_core.engines.vllm_platform import (
    StderrTail,
    check_gpu_count,
    check_model_exists,
    load_error_message,
    platform_defaults,
    stored_dtype,
)
from codesearch_core.errors import EngineError
from codesearch_core.models import Blueprint, Proposal
from codesearch_core.tools import OPENAI_TOOLS

ENGINE_NAME: Final = "vllm"
#: How long a clean shutdown may take before vLLM force-kills the engine process (its own
#: default, 5 s, is too short for tp=2 on a busy CPU and leaves shared memory behind).
SHUTDOWN_TIMEOUT_S: Final = 30


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
    enforce_eager: bool = False
    seed: int = 0
    trust_remote_code: bool = False
    batch_size: int = 256
    compact_json: bool = True
    grammar_backend: str = "auto"
    tool_format: str = DEFAULT_TOOL_FORMAT
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
        tool_format = get_tool_format(self.tool_format)
        if tool_format.begin and self.grammar_backend == "guidance":
            # guidance takes only the legacy structural tag, which cannot force a call.
            raise EngineError(
                f"tool format {tool_format.name} is constrained by a structural tag, which "
                "needs the xgrammar backend: use --grammar-backend xgrammar (or auto)"
            )

    @property
    def format(self) -> ToolFormat:
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
            "enforce_eager": self.enforce_eager,
            "seed": self.seed,
            "trust_remote_code": self.trust_remote_code,
        }
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


class VllmEngine:
    """`vllm.LLM` with chat templating and guided decoding; build it with `get_vllm_engine`."""

    name: str = ENGINE_NAME

    def __init__(self, settings: VllmSettings) -> None:
        self.settings = settings
        self.notices: tuple[str, ...] = ()
        self._llm: Any = None
        self._llm, self.notices = _build_llm(settings)
        #: The context length the engine runs with (what vLLM settled on).
        self.max_model_len: int | None = getattr(
            getattr(self._llm.llm_engine, "model_config", None), "max_model_len", None
        )

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def is_shut_down(self) -> bool:
        return self._llm is None

    def propose(
        self,
        blueprints: Sequence[Blueprint],
        *,
        n: int = 1,
        settings: SamplingSettings | None = None,
        prompt: PromptConfig | None = None,
        examples: Sequence[Example] = (),
        on_progress: ProgressFn | None = None,
        should_stop: StopFn | None = None,
    ) -> list[Proposal]:
        """Every blueprint of a batch goes into ONE `LLM.chat` call: that is where vLLM is fast."""
        check_n(n)
        if self._llm is None:
            raise EngineError("this vLLM engine was shut down; get a new one from get_vllm_engine")
        sampling = settings or SamplingSettings()
        tool_format = self.settings.format
        params = _sampling_params(n, sampling, tool_format, compact=self.settings.compact_json)
        record = sampling.to_dict(n)
        record["tool_format"] = tool_format.name
        proposals: list[Proposal] = []
        size = self.settings.batch_size
        for start in range(0, len(blueprints), size):
            if should_stop is not None and should_stop():
                break
            batch = blueprints[start : start + size]
            conversations = [
                build_messages(
                    b.intent, prompt, examples, template_tools=tool_format.template_tools
                )
                for b in batch
            ]
            proposals.extend(self._generate(batch, conversations, params, {**record}))
            if on_progress is not None:
                on_progress(start + len(batch), len(blueprints))
        return proposals

    def chat_arguments(self) -> dict[str, Any]:
        """What `LLM.chat` gets besides the conversations: the tools, the template and its switches."""
        arguments: dict[str, Any] = {}
        if self.settings.format.template_tools:
            arguments["tools"] = OPENAI_TOOLS
        if self.settings.chat_template:
            arguments["chat_template"] = _template_text(self.settings.chat_template)
        if self.settings.chat_template_kwargs:
            arguments["chat_template_kwargs"] = dict(self.settings.chat_template_kwargs)
        return arguments

    def _generate(
        self,
        batch: Sequence[Blueprint],
        conversations: list[list[Message]],
        params: Any,
        record: dict[str, Any],
    ) -> list[Proposal]:
        record["batch_size"] = len(batch)
        chat = self.chat_arguments()
        lengths = prompt_lengths(self._llm.get_tokenizer(), conversations, chat)
        # A prompt the context cannot hold fails its blueprint, not the batch.
        failed = {
            i: error
            for i, length in enumerate(lengths)
            if (error := length_error(length, self.max_model_len))
        }
        started = time.perf_counter()
        todo = [i for i in range(len(batch)) if i not in failed]
        outputs = self.chat_batch(conversations, todo, params, chat, failed)
        # Everything in a batch arrives together: each proposal waited the whole batch.
        latency = time.perf_counter() - started
        proposals: list[Proposal] = []
        for i, (blueprint, messages) in enumerate(zip(batch, conversations, strict=True)):
            prompt_json = messages_to_json(messages)
            if i in failed:
                proposals.append(
                    failed_proposal(
                        blueprint.id,
                        failed[i],
                        engine=ENGINE_NAME,
                        model=self.model,
                        sampling=record,
                        prompt=prompt_json,
                        prompt_tokens=lengths[i],
                    )
                )
                continue
            output = outputs[i]
            prompt_tokens = len(output.prompt_token_ids) if output.prompt_token_ids else None
            proposals.extend(
                proposal_from_text(
                    blueprint.id,
                    completion.text,
                    engine=ENGINE_NAME,
                    model=self.model,
                    finish_reason=completion.finish_reason,
                    sampling=record,
                    prompt=prompt_json,
                    latency_s=latency,
                    prompt_tokens=prompt_tokens,
                    completion_tokens=len(completion.token_ids),
                    tool_format=self.settings.format,
                )
                for completion in output.outputs
            )
        return proposals

    def chat_batch(
        self,
        conversations: list[list[Message]],
        todo: list[int],
        params: Any,
        chat: dict[str, Any],
        failed: dict[int, str],
    ) -> dict[int, Any]:
        """`LLM.chat`'s outputs for the conversations `todo` names, by index (`propose`, and the
        gym's chat policy, which batches the turns of many episodes through it). Should vLLM refuse a
        request the length check let through, each is asked alone, and a refused one goes into
        `failed` (vLLM withdraws a refused batch's requests)."""
        if not todo:
            return {}
        try:
            outputs = self._llm.chat(
                [conversations[i] for i in todo], params, use_tqdm=False, **chat
            )
        except request_error_types() as err:
            if len(todo) == 1:
                failed[todo[0]] = f"vLLM refused the prompt: {type(err).__name__}: {err}"
                return {}
            return {
                i: output
                for one in todo
                for i, output in self.chat_batch(conversations, [one], params, chat, failed).items()
            }
        except Exception as err:  # vLLM raises many types; all mean "this batch failed"
            raise EngineError(f"vLLM generation failed: {type(err).__name__}: {err}") from err
        return dict(zip(todo, outputs, strict=True))

    def shutdown(self) -> None:
        """Stop the engine core and its workers and free the model's memory. Idempotent."""
        llm, self._llm = self._llm, None
        if llm is None:
            return
        _shutdown_llm(llm)


def _sampling_params(
    n: int, sampling: SamplingSettings, tool_format: ToolFormat, *, compact: bool
) -> Any:
    from vllm import SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    return SamplingParams(
        n=n,
        temperature=sampling.temperature,
        top_p=sampling.top_p,
        max_tokens=sampling.max_tokens,
        seed=sampling.seed,
        structured_outputs=StructuredOutputsParams(
            **tool_format.structured_outputs(compact=compact)
        ),
        # A model may mark its tool-call tags as special tokens; the parser needs to see them.
        skip_special_tokens=not tool_format.begin,
    )


def _template_text(template: str) -> str:
    """`LLM.chat` takes the template's text, not a path."""
    path = Path(template).expanduser()
    if "{" not in template and path.is_file():
        return path.read_text(encoding="utf-8")
    return template


def visible_cuda_devices() -> int | None:
    """How many CUDA GPUs this process sees, or None when vLLM is not running on CUDA."""
    from vllm.platforms import current_platform

    if not current_platform.is_cuda():
        return None
    return int(_torch().cuda.device_count())


def _on_cpu() -> bool:
    from vllm.platforms import current_platform

    return bool(current_platform.is_cpu())


def _build_llm(settings: VllmSettings) -> tuple[Any, tuple[str, ...]]:
    check_model_exists(settings.model)
    template = settings.chat_template
    if template and "{" not in template and not Path(template).expanduser().is_file():
        raise EngineError(f"chat template {settings.chat_template!r} is not a file")
    # vLLM logs to stdout unless told otherwise, read once when it is first imported (here and in
    # each engine process, which inherit the variable): stdout is the command's (a summary, one
    # JSON document with --json), the log belongs with the progress on stderr.
    os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")
    try:
        import vllm
    except ImportError as err:
        raise EngineError(
            "vLLM is not installed in this environment: `uv sync --extra vllm` (GPU) or use "
            f"--engine openai against a `vllm serve` server ({err})"
        ) from err
    visible = visible_cuda_devices()
    if visible is not None:
        check_gpu_count(settings.tensor_parallel_size, settings.pipeline_parallel_size, visible)
    defaults = platform_defaults(
        workers=settings.tensor_parallel_size * settings.pipeline_parallel_size,
        dtype=settings.dtype,
        kv_cache_gib=settings.kv_cache_gib,
        on_cpu=_on_cpu(),
        model_dtype=stored_dtype(settings.model),
    )
    notices = defaults.notices
    # The workers are separate processes that read these at start: set before building.
    os.environ.update(defaults.env)
    kwargs = {**settings.llm_kwargs(), **defaults.kwargs}
    if settings.max_model_len is None:
        kwargs["max_model_len"], notice = default_max_model_len(settings.model)
        notices += (notice,) if notice else ()
    tail = StderrTail()
    try:
        with tail:
            return vllm.LLM(**kwargs), notices
    except Exception as err:  # any failure to load is a set-up problem the user must fix
        raise EngineError(
            load_error_message(settings.model, settings.tensor_parallel_size, err, tail.lines())
        ) from err


def _shutdown_llm(llm: Any) -> None:
    """Stop the engine core (and its worker processes), then free what the model held."""
    engine = getattr(llm, "llm_engine", None)
    core = getattr(engine, "engine_core", None)
    if core is not None and hasattr(core, "shutdown"):
        # vLLM's default wait is 5 s, then a force-kill that leaks the engine's shared memory.
        if "timeout" in inspect.signature(core.shutdown).parameters:
            core.shutdown(timeout=SHUTDOWN_TIMEOUT_S)
        else:
            core.shutdown()
    del engine, core, llm
    gc.collect()
    try:
        from vllm.distributed.parallel_state import cleanup_dist_env_and_memory
    except ImportError:  # pragma: no cover - vLLM moved it; memory is still freed by gc below
        pass
    else:
        cleanup_dist_env_and_memory()
    gc.collect()
    torch = _torch()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _torch() -> Any:
    # Through importlib so type checking works where torch is not installed (it comes with vLLM).
    return importlib.import_module("torch")


_engine_lock = threading.Lock()
_current_engine: VllmEngine | None = None


def get_vllm_engine(settings: VllmSettings) -> VllmEngine:
    """The process's one engine: the cached one for equal settings, else a fresh one.

    The old engine is shut down (its memory freed) BEFORE the new one is built, since both rarely
    fit on the GPUs at once. The app wraps this in `st.cache_resource`.
    """
    global _current_engine
    with _engine_lock:
        current = _current_engine
        if current is not None and current.settings == settings and not current.is_shut_down:
            return current
        if current is not None:
            _current_engine = None
            current.shutdown()
        _current_engine = VllmEngine(settings)
        return _current_engine


def shutdown_vllm_engine() -> None:
    """Shut the cached engine down (at exit, or to give the GPUs back)."""
    global _current_engine
    with _engine_lock:
        current, _current_engine = _current_engine, None
    if current is not None:
        current.shutdown()
