"""Valid calls and proposals per second for each way of asking a model for a tool call.

One vLLM engine, the same intents and seeded sampling; what changes is the constraint and the
prompt (`--options` picks them):

- `hermes-compact`: tools through the chat template, a structural tag holding the answer to
  `<tool_call>` + compact JSON (xgrammar EBNF, no whitespace) + `</tool_call>` (the default);
- `hermes-json-schema`: the same tag with plain JSON-schema content (whitespace allowed);
- `json-fallback`: the home-made prompt (tools described in the system message) and a JSON
  schema on the whole answer, compact (what the studio did before tool formats).

Runs where vLLM is installed (here: the vLLM CPU venv that `.ci/vllm_venv.sh` builds):

    PYTHONPATH=. ~/.cache/codesearch-gym/vllm-venv/bin/python benchmarks/bench_tool_formats.py
    python benchmarks/bench_tool_formats.py --model Qwen/Qwen2.5-Coder-7B-Instruct --tp 1   # a GPU

Without `--model` it builds the tiny random-weight Qwen2 of the test suite: there the grammar is
all that makes a call valid, so the valid rate measures how often a constrained answer finishes
within `--max-tokens` (whitespace and long strings are what cut it). With a real model it also
measures how often the model's own format helps it choose well (see the graded rewards).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

OPTIONS = {
    "hermes-compact": {"tool_format": "hermes", "compact_json": True},
    "hermes-json-schema": {"tool_format": "hermes", "compact_json": False},
    "json-fallback": {"tool_format": "json", "compact_json": True},
}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--model", help="HF id or directory (default: build the tiny test model)")
    p.add_argument("--tp", type=int, default=1)
    p.add_argument("--batch", type=int, default=32, help="intents per option (default 32)")
    p.add_argument("--max-tokens", type=int, default=384)
    p.add_argument("--max-model-len", type=int, default=2048)
    p.add_argument("--options", nargs="+", choices=tuple(OPTIONS), default=list(OPTIONS))
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        import vllm  # noqa: F401
    except ImportError:
        print("vLLM is not installed here: run this with the vLLM venv's python", file=sys.stderr)
        return 2
    from codesearch_core.corpora.blueprints import load_seed_blueprints
    from codesearch_core.engines.base import SamplingSettings
    from codesearch_core.engines.prompt import PromptConfig
    from codesearch_core.engines.vllm_engine import VllmSettings, get_vllm_engine

    with tempfile.TemporaryDirectory(prefix="bench-formats-") as tmp:
        model = args.model
        if model is None:
            from tests.vllm_support.tiny_model import build_tiny_qwen2

            model = str(build_tiny_qwen2(Path(tmp) / "tiny-qwen2"))
        # One engine for every option: they differ per request (constraint, prompt, tools),
        # and the engine-wide grammar settings (xgrammar, no free whitespace) serve them all.
        engine = get_vllm_engine(
            VllmSettings(
                model=model,
                tensor_parallel_size=args.tp,
                max_model_len=args.max_model_len,
                enforce_eager=args.model is None,
                grammar_backend="xgrammar",
            )
        )
        print(f"{model} tp={args.tp}; notices: {'; '.join(engine.notices) or 'none'}")
        seeds = load_seed_blueprints()
        prompt = PromptConfig(rules=()) if args.model is None else None
        sampling = SamplingSettings(temperature=0.8, max_tokens=args.max_tokens, seed=1234)
        base = engine.settings
        rows = []
        for name in args.options:
            engine.settings = replace(base, **OPTIONS[name])  # type: ignore[arg-type]
            # Own intents per option: the prefix cache must not hand one option another's work.
            batch = [
                replace(seeds[i % len(seeds)], id=f"{name}-{i}",
                        intent=f"{seeds[i % len(seeds)].intent} ({name} #{i})")
                for i in range(args.batch)
            ]  # fmt: skip
            engine.propose(batch[:2], settings=sampling, prompt=prompt)  # warm the grammar
            started = time.perf_counter()
            proposals = engine.propose(batch, settings=sampling, prompt=prompt)
            seconds = time.perf_counter() - started
            valid = sum(p.valid for p in proposals)
            tokens = sum(p.completion_tokens or 0 for p in proposals)
            prompt_tokens = sum(p.prompt_tokens or 0 for p in proposals) / len(proposals)
            rows.append((name, len(proposals), valid, tokens, prompt_tokens, seconds))
        engine.shutdown()

    print(f"\nbatch={args.batch} max_tokens={args.max_tokens}\n")
    print("| option | proposals | valid | tokens/proposal | prompt tokens | proposals/s |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, count, valid, tokens, prompt_tokens, seconds in rows:
        print(
            f"| {name} | {count} | {valid / count:.0%} | {tokens / count:.0f} | "
            f"{prompt_tokens:.0f} | {count / seconds:.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
