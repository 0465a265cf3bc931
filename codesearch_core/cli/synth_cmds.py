"""Sub-command: synthesize.

`codesearch synthesize --corpus NAME` mines the corpus with the rule templates, keeps the targets
a text search cannot fake, verifies and de-duplicates them and writes each as a draft blueprint to
the store, one transaction per draft: Ctrl-C keeps every draft made so far. Intents come from the
templates (no model), from vLLM in process, or from an OpenAI-compatible server.

Exit status, for scripts that run it again and again (a nightly job, a loop over corpora): 0 when
the run finished, whether it made new drafts or found every target already drafted ("0 new drafts,
N already drafted": running it twice is not an error); 1 when it finished with no draft at all,
new or stored (every candidate was dropped: the corpus gives nothing to review); 2 for bad input or
set-up, as every command: a corpus with nothing to mine, a model engine that cannot start; 130 when
Ctrl-C stopped it, after the report of what it kept (`"stopped": true` with --json). A second
Ctrl-C quits at once, with no report.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from codesearch_core import config
from codesearch_core.cli.interrupts import stop_on_ctrl_c
from codesearch_core.cli.progress import Progress
from codesearch_core.cli.tool_cmds import EXIT_OK, EXIT_PROBLEMS

if TYPE_CHECKING:  # the tools, the grader and the store load when the command runs
    from codesearch_core.synthesis import IntentWriter, SynthesisCounts, SynthesisReport

ENGINES: Final = ("templates", "vllm", "openai")
EXIT_INTERRUPTED: Final = 130


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "synthesize",
        help="make draft blueprints from a corpus: mine, verify, de-duplicate, write intents",
        description=(
            "Mine the corpus with ast-grep and ripgrep rule templates, keep targets in size bounds "
            "that a text baseline scores clearly below, re-run each reference, drop targets with "
            "the same findings or too-close intents, and write the rest as drafts to the store "
            "for review. Prints the counts per stage: mined, verified, deduplicated, kept."
        ),
    )
    p.add_argument("--corpus", required=True, help="the corpus to mine")
    p.add_argument("--engine", choices=ENGINES, default="templates", help="who writes intents")
    p.add_argument("--limit", type=int, default=None, help="stop after this many new drafts")
    p.add_argument("--seed", type=int, default=0, help="orders the targets and picks wordings")
    p.add_argument("--workers", type=int, default=2, help="threads running the tools")
    p.add_argument("--json", action="store_true", help="print one JSON report")
    p.add_argument(
        "--ray", nargs="?", const="local", metavar="ADDRESS",
        help="run the tool calls as Ray tasks: a local Ray (no ADDRESS), auto, or ray://HEAD:10001",
    )  # fmt: skip
    p.add_argument("--db", type=Path, help=f"the store (default {config.db_path()})")
    model = p.add_argument_group("model engines (vllm, openai)")
    model.add_argument("--model", help="model id or directory")
    model.add_argument("--n", type=int, default=4, help="intent samples per target (default 4)")
    model.add_argument("--temperature", type=float, default=0.8)
    model.add_argument("--max-tokens", type=int, default=96)
    p.add_argument(
        "--batch-size", type=int, default=128,
        help="candidates per batch: their baselines share rg passes, their intents one generate call",
    )  # fmt: skip
    model.add_argument("--tp", type=int, default=1, help="vllm tensor_parallel_size")
    model.add_argument("--max-model-len", type=int, default=None, help="vllm context length")
    model.add_argument("--base-url", help="openai: the server, e.g. http://127.0.0.1:8000/v1")
    model.add_argument("--api-key", help="openai: API key (default: $OPENAI_API_KEY)")
    p.set_defaults(func=cmd_synthesize)


def _writer(args: argparse.Namespace) -> IntentWriter:
    from codesearch_core.engines import SamplingSettings
    from codesearch_core.errors import EngineError
    from codesearch_core.synthesis import TemplateWriter, openai_writer, vllm_writer

    if args.engine == "templates":
        return TemplateWriter()
    if not args.model:
        raise EngineError(f"--engine {args.engine} needs --model")
    sampling = SamplingSettings(
        temperature=args.temperature, max_tokens=args.max_tokens, seed=args.seed
    )
    if args.engine == "openai":
        from codesearch_core.engines import OpenAIEngine, OpenAISettings

        if not args.base_url:
            raise EngineError("--engine openai needs --base-url, e.g. http://127.0.0.1:8000/v1")
        engine = OpenAIEngine(
            OpenAISettings(
                base_urls=(args.base_url,),
                model=args.model,
                api_key=args.api_key or os.environ.get("OPENAI_API_KEY"),
            )
        )
        return openai_writer(engine, sampling, n=args.n)
    from codesearch_core.engines import VllmSettings, get_vllm_engine
    from codesearch_core.weights import resolve_model

    vllm = get_vllm_engine(
        VllmSettings(
            model=resolve_model(args.model),
            tensor_parallel_size=args.tp,
            max_model_len=args.max_model_len,
            seed=args.seed,
        )
    )
    return vllm_writer(vllm, sampling, n=args.n)


def _line(counts: SynthesisCounts) -> str:
    return (
        f"mined {counts.mined} · verified {counts.verified} · deduplicated {counts.deduplicated}"
        f" · kept {counts.kept}"
    )


def cmd_synthesize(args: argparse.Namespace) -> int:
    """With vLLM, under the engine's stop path from its start on: SIGINT / SIGTERM stop the run and
    the engine within the grace, the drafts kept so far stay stored."""
    from codesearch_core.cli.propose_cmds import engine_interrupts

    try:
        with engine_interrupts(args.engine):
            return _synthesize(args)
    except KeyboardInterrupt:
        if args.engine == "vllm":
            print("interrupted: the drafts kept before it stay stored; run the same command "
                  "again to go on", file=sys.stderr)  # fmt: skip
        raise


def _synthesize(args: argparse.Namespace) -> int:
    from codesearch_core.cli.store_access import open_store
    from codesearch_core.synthesis import ray_map, stored_draft_ids, stored_intents, synthesize

    if args.limit is not None and args.limit < 1:
        print("error: --limit must be at least 1", file=sys.stderr)
        return 2
    writer = _writer(args)
    try:
        with (
            open_store(args.db or config.db_path()) as store,
            stop_on_ctrl_c("the drafts in flight") as ctrl_c,
            # Kept drafts against the limit (the candidates are many more than the drafts kept).
            Progress("synthesize", total=args.limit, unit="drafts") as bar,
        ):

            def progress(counts: SynthesisCounts) -> None:
                figures = {"mined": counts.mined, "verified": counts.verified,
                           "deduplicated": counts.deduplicated}  # fmt: skip
                bar.update(counts.kept, **figures)

            report = synthesize(
                args.corpus,
                writer=writer,
                sink=store.drafts,
                limit=args.limit,
                seed=args.seed,
                workers=args.workers,
                batch_size=args.batch_size,
                known_intents=stored_intents(store, args.corpus),
                known_drafts=stored_draft_ids(store, args.corpus),
                on_progress=progress,
                should_stop=ctrl_c.is_set,
                map_fn=None
                if args.ray is None
                else ray_map(None if args.ray == "local" else args.ray),
            )
    finally:
        if args.engine == "vllm":
            from codesearch_core.engines import shutdown_vllm_engine

            shutdown_vllm_engine()
    _print(report, as_json=args.json)
    if ctrl_c.is_set():
        print(
            f"interrupted: {report.counts.kept} new drafts kept; run the same command again to go "
            "on",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    return exit_code(report)


def exit_code(report: SynthesisReport) -> int:
    """0: finished, with new drafts or with every target drafted before; 1: no draft at all."""
    counts = report.counts
    if counts.kept or counts.already_drafted or report.stopped:
        return EXIT_OK
    return EXIT_PROBLEMS


def _print(report: SynthesisReport, *, as_json: bool) -> None:
    if as_json:
        print(json.dumps(report.to_dict(), ensure_ascii=False))
        return
    counts = report.counts
    print(f"{report.corpus} ({report.engine}): candidates {counts.candidates} · {_line(counts)}")
    if counts.dropped:
        print("dropped: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.dropped.items())))
    if report.too_slow:
        print(
            "no drafts of " + ", ".join(report.too_slow) + ": a reference call of that tool and "
            "language did not finish on the whole corpus within the default timeout "
            "(too_slow_whole_corpus)"
        )
    per_minute = report.to_dict()["drafts_per_minute"]
    print(
        f"{counts.kept} new drafts, {counts.already_drafted} already drafted, in "
        f"{report.elapsed_s:.1f} s ({per_minute} per minute)"
    )
    if not counts.kept and not counts.already_drafted and not report.stopped:
        print("no drafts: every candidate was dropped (see above)")
