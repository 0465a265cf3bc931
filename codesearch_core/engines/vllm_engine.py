"""Proposals from vLLM running in this process, with the tool-call schema enforced by the grammar.

vLLM is an optional dependency: it is imported inside functions only, so this module (and the
package) imports without it, and importing it does no work. That matters for a second reason: with
`tensor_parallel_size > 1` vLLM starts worker processes which may re-import the main script, so a
script that builds an engine must do it under `if __name__ == "__main__":`.

One engine per process: a model takes most of the GPU, so `get_vllm_engine` caches one engine and,
asked for other settings, shuts the old one down and frees its memory before building the new one.

The model is asked in its own tool format (`tool_format.py`): the tools go through its chat
template (`LLM.chat(..., tools=OPENAI_TOOLS)`), and a structural tag holds the answer to the
format's markers with the tool-call schema between them. A model whose chat template drops the
tools (`tool_template.renders_tools`, checked once at start) is asked through the project's tool
template instead (`tool_template.py`: Hermes markers, compact JSON, the tools in the system
message), the same one its training data is rendered with; `tool_template` forces either way.

On a CPU the engine runs eager unless told otherwise (`enforce_eager=None`: vLLM's CPU build
would compile the model with torch.compile at every start, minutes; eager starts in seconds).

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
from collections.abc import Mapping, Sequence
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
from codesearch_core.engines.stopping import grace_left
from codesearch_core.engines.tool_format import ToolFormat
from codesearch_core.engines.tool_template import (
    PROJECT_TOOL_FORMAT,
    renders_tools,
    tool_template_messages,
)
from codesearch_core.engines.vllm_context import (
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

# Re-exported (`as`): callers build the engine's settings where they get the engine.
from codesearch_core.engines.vllm_settings import VllmSettings as VllmSettings
from codesearch_core.errors import EngineError
from codesearch_core.models import Blueprint, Proposal
from codesearch_core.tools import OPENAI_TOOLS

ENGINE_NAME: Final = "vllm"
#: How long a clean shutdown may take before vLLM force-kills the engine process (its own
#: default, 5 s, is too short for tp=2 on a busy CPU and leaves shared memory behind); after a
#: stop signal, what is left of `stopping.STOP_GRACE_S`.
SHUTDOWN_TIMEOUT_S: Final = 30


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
        #: Whether prompts go through the project's tool template, and the syntax then asked for.
        self.tool_template = _uses_tool_template(settings, self._llm.get_tokenizer())
        self.tool_format: ToolFormat = (
            PROJECT_TOOL_FORMAT if self.tool_template else settings.format
        )
        if self.tool_template and settings.tool_template == "auto":
            self.notices += (
                "the model's chat template does not show `tools`: it is asked through the "
                f"project's tool template ({self.tool_format.label}, compact JSON, the tools in "
                "the system message; --tool-template model to keep its own)",
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
        tool_format = self.tool_format
        params = _sampling_params(n, sampling, tool_format, compact=self.settings.compact_json)
        record = sampling.to_dict(n)
        record["tool_format"] = tool_format.name
        if self.tool_template:
            record["tool_template"] = "project"
        proposals: list[Proposal] = []
        size = self.settings.batch_size
        for start in range(0, len(blueprints), size):
            if should_stop is not None and should_stop():
                break
            batch = blueprints[start : start + size]
            conversations = [
                self.conversation(
                    build_messages(
                        b.intent, prompt, examples, template_tools=tool_format.template_tools
                    )
                )
                for b in batch
            ]
            proposals.extend(self._generate(batch, conversations, params, {**record}))
            if on_progress is not None:
                on_progress(start + len(batch), len(blueprints))
        return proposals

    def conversation(
        self, messages: list[Message], tools: Sequence[Mapping[str, Any]] = OPENAI_TOOLS
    ) -> list[Message]:
        """The messages as `LLM.chat` is given them: as they are when the chat template shows
        the tools (`chat_arguments` passes them), else in the project's tool template."""
        if not self.tool_template:
            return messages
        return tool_template_messages(messages, tools, self.tool_format)

    def chat_arguments(self) -> dict[str, Any]:
        """What `LLM.chat` gets besides the conversations: the tools, the template and its switches."""
        arguments: dict[str, Any] = {}
        if self.tool_format.template_tools and not self.tool_template:
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
                    tool_format=self.tool_format,
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


def _uses_tool_template(settings: VllmSettings, tokenizer: Any) -> bool:
    """Whether prompts go through the project's tool template: asked for, or (`auto`) a format
    whose tools go through the chat template, and a template that does not show them."""
    if settings.tool_template != "auto":
        return settings.tool_template == "project"
    if not settings.format.template_tools:
        return False  # the `json` format describes the tools itself
    template = _template_text(settings.chat_template) if settings.chat_template else None
    return not renders_tools(tokenizer, template)


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
        enforce_eager=settings.enforce_eager,
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
            # After a stop signal, only what is left of the grace the docs promise.
            left = grace_left()
            core.shutdown(
                timeout=SHUTDOWN_TIMEOUT_S if left is None else min(SHUTDOWN_TIMEOUT_S, left)
            )
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
