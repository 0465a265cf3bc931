"""Proposals per second: a batch of intents in ONE `LLM.chat` call vs one call per intent.

Same engine, same prompts, same seeded sampling, so the two modes generate the same text and only
the batching differs. Also timed: the bare `LLM.chat` on the same batch, to show what the engine's
prompt building, parsing and repair cost on top of vLLM.

Runs where vLLM is installed (here: the vLLM CPU venv that `.ci/vllm_venv.sh` builds):

    PYTHONPATH=. ~/.cache/codesearch-gym/vllm-venv/bin/python benchmarks/bench_generation.py
    python benchmarks/bench_generation.py --model Qwen/Qwen2.5-Coder-7B-Instruct --tp 1   # a GPU

Without `--model` it builds the tiny random-weight Qwen2 of the test suite (CPU-sized). Batched
generation must beat sequential by at least 5x at batch 64; the exit status says whether it did.
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

REQUIRED_SPEEDUP = 5.0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--model", help="HF id or directory (default: build the tiny test model)")
    p.add_argument("--tp", type=int, default=1, help="tensor_parallel_size (default 1)")
    p.add_argument("--batch", type=int, default=64, help="intents per batched call (default 64)")
    p.add_argument("--n", type=int, default=1, help="samples per intent (default 1)")
    p.add_argument("--max-tokens", type=int, default=128)
    p.add_argument("--max-model-len", type=int, default=2048)
    p.add_argument("--dtype", default=None, help="default: float32 for the tiny model, else auto")
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
    from codesearch_core.engines.prompt import build_messages
    from codesearch_core.engines.vllm_engine import VllmSettings, _sampling_params, get_vllm_engine
    from codesearch_core.models import Blueprint

    with tempfile.TemporaryDirectory(prefix="bench-generation-") as tmp:
        model = args.model
        if model is None:
            from tests.vllm_support.tiny_model import build_tiny_qwen2

            model = str(build_tiny_qwen2(Path(tmp) / "tiny-qwen2"))
        dtype = args.dtype or ("float32" if args.model is None else "auto")
        started = time.perf_counter()
        engine = get_vllm_engine(
            VllmSettings(
                model=model,
                tensor_parallel_size=args.tp,
                max_model_len=args.max_model_len,
                dtype=dtype,
                enforce_eager=args.model is None,
                batch_size=args.batch,
            )
        )
        print(f"engine up in {time.perf_counter() - started:.1f}s: {model} tp={args.tp}")

        seeds = load_seed_blueprints()

        def intents(mode: str) -> list[Blueprint]:
            # Each mode gets its own intents: vLLM's prefix cache would otherwise hand the later
            # modes the earlier ones' prompts for free. The shared system prompt stays cached for
            # all of them, as it does in real use.
            cycled = [seeds[i % len(seeds)] for i in range(args.batch)]
            return [
                replace(seed, id=f"{mode}-{i}", intent=f"{seed.intent} ({mode} #{i})")
                for i, seed in enumerate(cycled)
            ]

        sampling = SamplingSettings(temperature=0.8, max_tokens=args.max_tokens, seed=1234)
        engine.propose(intents("warm-up")[:2], n=args.n, settings=sampling)

        t0 = time.perf_counter()
        batched = engine.propose(intents("batched"), n=args.n, settings=sampling)
        t_batched = time.perf_counter() - t0

        t0 = time.perf_counter()
        sequential = [
            p
            for b in intents("sequential")
            for p in engine.propose([b], n=args.n, settings=sampling)
        ]
        t_sequential = time.perf_counter() - t0

        tool_format = engine.settings.format
        conversations = [
            build_messages(b.intent, template_tools=tool_format.template_tools)
            for b in intents("bare")
        ]
        params = _sampling_params(args.n, sampling, tool_format, compact=True)
        t0 = time.perf_counter()
        bare = engine._llm.chat(conversations, params, use_tqdm=False, **engine.chat_arguments())
        t_bare = time.perf_counter() - t0
        engine.shutdown()

    def tokens(proposals: list) -> int:  # type: ignore[type-arg]
        return sum(p.completion_tokens or 0 for p in proposals)

    bare_tokens = sum(len(c.token_ids) for o in bare for c in o.outputs)
    rows = [
        ("bare LLM.chat, batched", len(bare) * args.n, bare_tokens, t_bare),
        ("engine, batched", len(batched), tokens(batched), t_batched),
        ("engine, one at a time", len(sequential), tokens(sequential), t_sequential),
    ]
    print(f"\nbatch={args.batch} n={args.n} max_tokens={args.max_tokens}")
    print(
        f"{'mode':<24} {'proposals':>9} {'tokens':>8} {'seconds':>8} {'proposals/s':>12} {'tokens/s':>9}"
    )
    for name, count, toks, secs in rows:
        print(
            f"{name:<24} {count:>9} {toks:>8} {secs:>8.2f} {count / secs:>12.1f} {toks / secs:>9.0f}"
        )
    valid = sum(p.valid for p in batched)
    print(f"valid proposals (batched): {valid}/{len(batched)}")
    speedup = (len(batched) / t_batched) / (len(sequential) / t_sequential)
    overhead = t_batched / t_bare
    print(
        f"\nbatched vs one-at-a-time: {speedup:.1f}x proposals/s (required >= {REQUIRED_SPEEDUP:g}x)"
    )
    print(f"engine vs bare LLM.chat (batched): {overhead:.2f}x the time")
    return 0 if speedup >= REQUIRED_SPEEDUP else 1


if __name__ == "__main__":
    raise SystemExit(main())
