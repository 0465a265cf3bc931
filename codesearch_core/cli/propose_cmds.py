"""Sub-command: propose.

`codesearch propose` asks an engine for tool calls for many blueprints and writes them to JSONL
(`--out`) or to the store (`--db`, the default). Work is written a chunk at a time, so an
interrupted run keeps what it had finished.

With `--engine vllm`, vLLM may start worker processes that re-import the main script: the
`codesearch` console script is safe; a script of your own must call `main()` under
`if __name__ == "__main__":`. The engine is shut down before the command returns, whatever ends
it (done, an error, Ctrl-C): left to the interpreter's exit, vLLM force-kills its processes.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, TextIO, TypeVar

from codesearch_core import config
from codesearch_core.cli.progress import Progress
from codesearch_core.corpora import (
    SEED_SETS,
    describe_seed_set,
    load_seed_set,
    read_blueprints_jsonl,
)
from codesearch_core.engines import (
    DEFAULT_PRESET,
    DEFAULT_TOOL_FORMAT,
    MAX_N,
    PRESETS,
    SCHEMA_MODES,
    TOOL_FORMATS,
    Engine,
    ImportEngine,
    ModelPreset,
    MutationEngine,
    OpenAIEngine,
    OpenAISettings,
    ProgressFn,
    PromptConfig,
    SamplingSettings,
    get_preset,
    proposal_to_json,
)
from codesearch_core.errors import EngineError, InputFileError
from codesearch_core.models import Blueprint, Proposal

ENGINES: Final = ("mutations", "vllm", "openai", "import")
DEFAULT_CHUNK: Final = 256


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add `codesearch propose` to the parser."""
    p = sub.add_parser(
        "propose",
        help="ask an engine for tool calls for blueprints; write them to the store or JSONL",
        description=(
            "Propose tool calls for blueprints with an engine: mutations (no model; hard "
            "negatives), vllm (in process), openai (any OpenAI-compatible server, e.g. vllm "
            "serve) or import (a JSONL file made elsewhere)."
        ),
    )
    p.add_argument("--engine", choices=ENGINES, default="mutations")
    p.add_argument(
        "--blueprints",
        default="seeds",
        metavar="SOURCE",
        help=f"{seed_sets_help()}; 'store' (the store's), or a blueprints JSONL file",
    )
    p.add_argument("--ids", nargs="+", metavar="ID", help="only these blueprint ids")
    p.add_argument(
        "--n",
        type=int,
        default=1,
        help=f"proposals per blueprint, 1 to {MAX_N} (default 1; mutations: at most one per kind)",
    )
    add_engine_arguments(p)

    imported = p.add_argument_group("import")
    imported.add_argument("--from", dest="from_file", type=Path, metavar="FILE")
    imported.add_argument("--skip-bad", action="store_true", help="skip bad lines, list them")

    out = p.add_argument_group("output (one of)")
    where = out.add_mutually_exclusive_group()
    where.add_argument("--out", type=Path, metavar="FILE.jsonl", help="write proposals as JSONL")
    where.add_argument("--db", type=Path, help=f"the store (default {config.db_path()})")
    out.add_argument("--append", action="store_true", help="append to an existing --out file")
    out.add_argument("--chunk", type=int, default=DEFAULT_CHUNK, help=argparse.SUPPRESS)
    p.set_defaults(func=run_propose)


def add_engine_arguments(p: argparse.ArgumentParser) -> None:
    """The model, sampling, vllm and openai options (`codesearch propose` and `codesearch eval`
    take the same ones; `build_engine` reads them)."""
    model_help = "model: a Hugging Face id, a local directory or a preset (" + ", ".join(
        preset.key for preset in PRESETS
    )
    p.add_argument("--model", help=f"{model_help}); default {DEFAULT_PRESET.hf_id}")

    sampling = p.add_argument_group("sampling (vllm, openai; default: the preset's, else these)")
    defaults = SamplingSettings()
    sampling.add_argument("--temperature", type=float, help=f"default {defaults.temperature}")
    sampling.add_argument("--top-p", type=float, help=f"default {defaults.top_p}")
    sampling.add_argument("--max-tokens", type=int, default=defaults.max_tokens)
    sampling.add_argument("--seed", type=int, default=None)
    sampling.add_argument(
        "--tool-format",
        choices=tuple(TOOL_FORMATS),
        help=(
            "the model's tool-call syntax: tools go through its chat template and the answer is "
            "read in that syntax (default: the preset's, else hermes); json: the tools described "
            "in the system prompt, for models without a tool template"
        ),
    )
    sampling.add_argument(
        "--prompt-schema",
        choices=("compact", "full", "none"),
        default="compact",
        help="--tool-format json only: how the prompt shows the tool schema (default compact)",
    )

    vllm = p.add_argument_group("vllm")
    vllm.add_argument("--tp", type=int, default=2, help="tensor_parallel_size (default 2)")
    vllm.add_argument("--pp", type=int, default=1, help="pipeline_parallel_size (default 1)")
    vllm.add_argument(
        "--max-model-len",
        type=int,
        help="default: the preset's, else 4096 or the model's own limit when smaller",
    )
    vllm.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    vllm.add_argument(
        "--dtype",
        help="default: the preset's, else auto (the dtype the weights are stored in)",
    )
    vllm.add_argument(
        "--enforce-eager",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="no torch.compile or CUDA graphs (default: on a CPU, where compiling takes minutes "
        "at every start; --no-enforce-eager compiles there too)",
    )
    vllm.add_argument(
        "--tool-template",
        choices=("auto", "model", "project"),
        default="auto",
        help="how the tools reach the model: auto (default) its chat template, or the project's "
        "tool template (Hermes markers, compact JSON, the tools in the system message) when its "
        "template drops them; model / project: always that one",
    )
    vllm.add_argument(
        "--batch-size", type=int, default=256, help="blueprints per LLM.chat call (default 256)"
    )
    vllm.add_argument(
        "--compact-json",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="no whitespace between JSON tokens (default on)",
    )
    vllm.add_argument("--grammar-backend", choices=("auto", "xgrammar", "guidance"), default="auto")
    vllm.add_argument(
        "--kv-cache-gib",
        type=float,
        help="KV cache size (default: vLLM's memory fraction on a GPU, 2 GiB on a CPU)",
    )
    vllm.add_argument(
        "--chat-template", metavar="FILE", help="a chat template instead of the model's"
    )

    openai = p.add_argument_group("openai")
    openai.add_argument(
        "--base-url",
        action="append",
        metavar="URL",
        help="server base URL ending in /v1; repeat to spread requests over replicas",
    )
    openai.add_argument("--api-key", help="API key (default: $OPENAI_API_KEY)")
    openai.add_argument(
        "--schema-mode",
        choices=SCHEMA_MODES,
        default="tools",
        help=(
            "tools (default): OpenAI tools + tool_choice required, strict; tools_compact (vLLM "
            "servers): tools + a structural tag for compact JSON; response_format / "
            "structured_outputs / none: the json fallback, schema on the whole answer"
        ),
    )
    openai.add_argument("--max-concurrency", type=int, default=8)
    openai.add_argument("--timeout", type=float, default=120.0, help="seconds per request")


def run_propose(args: argparse.Namespace) -> int:
    # Checked before anything is loaded or built: a typo must not reach vLLM or a server.
    if args.n < 1:
        raise EngineError(f"--n must be at least 1, got {args.n}")
    if args.n > MAX_N:
        raise EngineError(f"--n must be at most {MAX_N} (samples per blueprint), got {args.n}")
    blueprints = _select(load_blueprints(args.blueprints, args.db), args.ids)
    if args.out is not None:
        _refuse_existing(args.out, args.append)
    with engine_interrupts(args.engine):
        try:
            return _propose(args, blueprints)
        finally:
            if args.engine == "vllm":
                from codesearch_core.engines import shutdown_vllm_engine

                shutdown_vllm_engine()


def engine_interrupts(engine: str) -> contextlib.AbstractContextManager[None]:
    """With vLLM, the engine's stop path (`engines.stopping`): SIGINT or SIGTERM at any moment stops
    the command and the engine's processes within the grace, exit 130 / 143."""
    if engine != "vllm":
        return contextlib.nullcontext()
    from codesearch_core.engines import engine_stop_path

    return engine_stop_path()


def _propose(args: argparse.Namespace, blueprints: list[Blueprint]) -> int:
    engine = build_engine(args)
    for notice in getattr(engine, "notices", ()):
        print(f"note: {notice}", file=sys.stderr)
    settings = sampling_settings(args)
    prompt = PromptConfig(schema=args.prompt_schema)
    sink = _open_sink(args, blueprints)
    progress = Progress(f"{engine.name}:{engine.model}", total=len(blueprints), unit="blueprints")
    counts = {"proposals": 0, "valid": 0}
    no_answer: list[Proposal] = []  # requests that failed (a prompt too long for the model, …)
    # Chunks are written as they finish, so an interrupted run keeps its work. An import reads
    # its file once for all blueprints (its lines may name any of them).
    chunk_size = len(blueprints) if isinstance(engine, ImportEngine) else max(args.chunk, 1)
    try:
        for start in range(0, len(blueprints), max(chunk_size, 1)):
            chunk = blueprints[start : start + chunk_size]
            proposals = engine.propose(
                chunk,
                n=args.n,
                settings=settings,
                prompt=prompt,
                on_progress=_chunk_progress(progress, start, len(chunk)),
            )
            sink.write(proposals)
            counts["proposals"] += len(proposals)
            counts["valid"] += sum(p.valid for p in proposals)
            no_answer.extend(p for p in proposals if not p.valid and not p.raw_text and p.error)
            progress.update(progress.done, proposals=counts["proposals"], valid=counts["valid"])
    except KeyboardInterrupt:
        progress.close()
        print(f"interrupted: {counts['proposals']} proposals kept in {sink.where}", file=sys.stderr)
        raise
    finally:
        progress.close()
        sink.close()
    invalid = counts["proposals"] - counts["valid"]
    print(
        f"{counts['proposals']} proposals ({counts['valid']} valid, {invalid} invalid) "
        f"for {len(blueprints)} blueprints from {engine.name}:{engine.model} → {sink.where}"
    )
    if no_answer:
        first = no_answer[0]
        print(
            f"{len(no_answer)} of them got no answer from the model; the first, for "
            f"{first.blueprint_id}: {first.error}",
            file=sys.stderr,
        )
    skipped = getattr(engine, "skipped", [])
    for err in skipped:
        print(f"skipped: {err}", file=sys.stderr)
    return 1 if skipped else 0


def sampling_settings(args: argparse.Namespace) -> SamplingSettings:
    """The sampling flags, else the preset's, else the defaults."""
    preset = _preset(args)
    defaults = SamplingSettings()
    return SamplingSettings(
        temperature=_first(args.temperature, preset and preset.temperature, defaults.temperature),
        top_p=_first(args.top_p, preset and preset.top_p, defaults.top_p),
        max_tokens=args.max_tokens,
        seed=args.seed,
    )


def _chunk_progress(progress: Progress, start: int, size: int) -> ProgressFn:
    def report(done: int, total: int) -> None:
        if total == size:
            progress.update(start + done)
        else:  # the engine counts something else (an import counts lines)
            progress.update(done, total=total)

    return report


def seed_sets_help() -> str:
    """What `--blueprints` says of the seed sets, in every command that takes them."""
    return "; ".join(
        describe_seed_set(name) + (" (default)" if i == 0 else "") for i, name in
        enumerate(SEED_SETS)
    )  # fmt: skip


def load_blueprints(source: str, db: Path | None = None) -> list[Blueprint]:
    """A seed set ('seeds', 'seeds-all': `corpora.seed_sets`), 'store', or a blueprints JSONL."""
    if source in SEED_SETS:
        return load_seed_set(source)
    if source == "store":
        from codesearch_core.cli.store_access import open_store

        blueprints: list[Blueprint] = []
        with open_store(db or config.db_path()) as store:
            while True:
                page = store.blueprints.list(offset=len(blueprints), limit=500)
                blueprints.extend(page.items)
                if not page.items or len(blueprints) >= page.total:
                    return blueprints
    from_file, _ = read_blueprints_jsonl(Path(source))
    return from_file


def _select(blueprints: list[Blueprint], ids: Sequence[str] | None) -> list[Blueprint]:
    if not ids:
        return blueprints
    by_id = {b.id: b for b in blueprints}
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        raise InputFileError(f"unknown blueprint id(s): {', '.join(unknown)}")
    return [by_id[i] for i in dict.fromkeys(ids)]


def _preset(args: argparse.Namespace) -> ModelPreset | None:
    """The preset `--model` names (no --model: the default preset), or None for any other model."""
    if not args.model:
        return DEFAULT_PRESET
    try:
        return get_preset(args.model)
    except EngineError:
        return None


def model_name(args: argparse.Namespace) -> str:
    preset = _preset(args)
    return preset.hf_id if preset else str(args.model)


_T = TypeVar("_T")


def _first(*values: _T | None) -> _T:
    """The first value that is set: a flag, then the preset's, then the default."""
    for value in values:
        if value is not None:
            return value
    raise ValueError("no value set")


def _tool_format(args: argparse.Namespace) -> str:
    preset = _preset(args)
    return str(_first(args.tool_format, preset and preset.tool_format, DEFAULT_TOOL_FORMAT))


def _max_model_len(args: argparse.Namespace, preset: ModelPreset | None) -> int | None:
    if args.max_model_len is not None:
        return int(args.max_model_len)
    return preset.max_model_len if preset else None


def build_engine(args: argparse.Namespace) -> Engine:
    """The engine the flags name (`add_engine_arguments`; `--engine`, `--from`, `--skip-bad`).
    vLLM's engine is built here (and can fail to start: an EngineError with its last error)."""
    if args.engine == "mutations":
        return MutationEngine()
    if args.engine == "import":
        if args.from_file is None:
            raise InputFileError("--engine import needs --from FILE.jsonl")
        return ImportEngine(args.from_file, skip_bad=args.skip_bad)
    if args.engine == "openai":
        if not args.base_url:
            raise EngineError("--engine openai needs --base-url, e.g. http://127.0.0.1:8000/v1")
        return OpenAIEngine(
            OpenAISettings(
                base_urls=tuple(args.base_url),
                model=model_name(args),
                api_key=args.api_key or os.environ.get("OPENAI_API_KEY"),
                schema_mode=args.schema_mode,
                tool_format=_tool_format(args),
                max_concurrency=args.max_concurrency,
                timeout_s=args.timeout,
            )
        )
    from codesearch_core.engines import VllmSettings, get_vllm_engine
    from codesearch_core.weights import resolve_model

    preset = _preset(args)
    return get_vllm_engine(
        VllmSettings(
            # a model added by `codesearch model add` is loaded from its pinned folder
            model=resolve_model(model_name(args)),
            tensor_parallel_size=args.tp,
            pipeline_parallel_size=args.pp,
            # None: 4096, or the model's own limit when smaller (the engine says which)
            max_model_len=_max_model_len(args, preset),
            gpu_memory_utilization=args.gpu_memory_utilization,
            dtype=_first(args.dtype, preset and preset.dtype, "auto"),
            enforce_eager=args.enforce_eager,
            batch_size=args.batch_size,
            compact_json=args.compact_json,
            grammar_backend=args.grammar_backend,
            tool_format=_tool_format(args),
            tool_template=args.tool_template,
            chat_template=args.chat_template,
            chat_template_kwargs=preset.chat_template_kwargs if preset else (),
            kv_cache_gib=args.kv_cache_gib,
            seed=args.seed or 0,
        )
    )


def _refuse_existing(path: Path, append: bool) -> None:
    if path.exists() and not append:
        raise InputFileError(f"{path} exists: pass --append to add to it, or choose another path")


class _JsonlSink:
    def __init__(self, path: Path, append: bool) -> None:
        _refuse_existing(path, append)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.where = str(path)
        self._fh: TextIO = path.open("a", encoding="utf-8")

    def write(self, proposals: Sequence[Proposal]) -> None:
        for proposal in proposals:
            self._fh.write(proposal_to_json(proposal) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()


class _StoreSink:
    def __init__(self, path: Path, blueprints: Sequence[Blueprint], from_store: bool) -> None:
        from codesearch_core.cli.store_access import open_store

        self.where = str(path)
        self._store = open_store(path)
        try:
            if not from_store:
                # Proposals point at stored blueprints; storing identical ones again is a no-op.
                self._store.blueprints.add(blueprints, source="propose")
        except BaseException:
            self._store.close()
            raise

    def write(self, proposals: Sequence[Proposal]) -> None:
        if proposals:
            self._store.add_proposals(list(proposals))

    def close(self) -> None:
        self._store.close()


def _open_sink(
    args: argparse.Namespace, blueprints: Sequence[Blueprint]
) -> _JsonlSink | _StoreSink:
    if args.out is not None:
        return _JsonlSink(args.out, args.append)
    return _StoreSink(args.db or config.db_path(), blueprints, args.blueprints == "store")
