"""The training run itself, in the python that has torch and TRL:

    python -m codesearch_core.train.worker WORK/spec.json

`codesearch train` writes the spec (and the SFT rows) and starts this; nobody needs to call it by
hand. It trains into `WORK/model` (WORK is `.OUT.partial` beside OUT), renames that folder to OUT
only when the model and its tokenizer are saved, and writes the run record beside it. Ctrl-C (or
SIGTERM) removes WORK, records the run as interrupted and exits 130: no half-written model folder.

- sft: the rows (`hf-chat` one-call items, `hf-agent` episodes) rendered for the model
  (`sampling.Renderer`), those longer than the context left out and counted, then TRL's
  `SFTTrainer` with the loss on what the model writes.
- rft: K episodes per task of the split played by the model in the gym (`HfChat`, or vLLM),
  the verified kept (`rft.verified_rows`), then the same SFT on them.
- grpo: TRL's `GRPOTrainer` with the gym as its `environment_factory` (`gym.trl_adapter()`), the
  prompts longer than the context leaves (less the completion) left out and counted.
"""

from __future__ import annotations

import json
import shutil
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any, Final

from codesearch_core.errors import CodesearchError, EnvironmentFault, InputFileError
from codesearch_core.train.fit import fit_context
from codesearch_core.train.record import RunRecord, folder_sha256, record_path, write_record
from codesearch_core.train.spec import MODEL_DIR, ROWS_NAME, TASKS_NAME, Spec

EXIT_OK: Final = 0
EXIT_PROBLEMS: Final = 1
EXIT_BAD_INPUT: Final = 2
EXIT_INTERRUPTED: Final = 130
#: The longest context a run uses when the model's is longer and --max-length is not given.
DEFAULT_MAX_LENGTH: Final = 4096


class NothingToTrain(CodesearchError):
    """The run has no row to learn from (RFT: no episode was verified)."""


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def pick_device(requested: str) -> str:
    import torch

    has_cuda = bool(torch.cuda.is_available())
    if requested == "cuda" and not has_cuda:
        raise EnvironmentFault("--device cuda: this machine has no CUDA device torch can see")
    if requested == "auto":
        return "cuda" if has_cuda else "cpu"
    return requested


def context_limit(model: str, tokenizer: Any, asked: int) -> int:
    """The tokens a row may hold: --max-length, else the model's positions (and the tokenizer's
    limit when it states one), at most DEFAULT_MAX_LENGTH."""
    config = json.loads((Path(model) / "config.json").read_text(encoding="utf-8"))
    positions = int(config.get("max_position_embeddings") or DEFAULT_MAX_LENGTH)
    if asked > positions:
        raise InputFileError(f"--max-length {asked}: the model has {positions} positions")
    if asked:
        return asked
    limits = [positions, DEFAULT_MAX_LENGTH]
    stated = getattr(tokenizer, "model_max_length", None)
    if isinstance(stated, int) and 0 < stated < 1_000_000:
        limits.append(stated)
    return min(limits)


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _train_args(spec: Spec, device: str, work: Path) -> dict[str, Any]:
    import torch

    s = spec.settings
    return {
        "output_dir": str(work / "checkpoints"),
        "max_steps": s.max_steps if s.max_steps > 0 else -1,
        "num_train_epochs": s.epochs,
        "per_device_train_batch_size": s.batch_size,
        "gradient_accumulation_steps": s.grad_accum,
        "learning_rate": s.learning_rate,
        "use_cpu": device == "cpu",
        "bf16": device == "cuda" and bool(torch.cuda.is_bf16_supported()),
        "report_to": "none",
        "save_strategy": "no",
        "logging_steps": 1,
        "seed": s.seed,
    }


def _losses(history: Sequence[dict[str, Any]]) -> dict[str, Any]:
    losses = [h["loss"] for h in history if "loss" in h]
    return {"steps": len(losses), "first_loss": losses[0] if losses else None,
            "last_loss": losses[-1] if losses else None}  # fmt: skip


def _step_lines() -> Any:
    """A callback that says each logged step on stderr (`step 3/500: loss 8.31`): tqdm's bar is
    silent on a pipe, and a log of a long run should show it moving."""
    from transformers import TrainerCallback

    class StepLines(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **_: Any) -> None:
            if logs and "loss" in logs:
                print(f"step {state.global_step}/{state.max_steps}: loss {logs['loss']:.4g}",
                      file=sys.stderr, flush=True)  # fmt: skip

    return StepLines()


def sft(spec: Spec, rows: list[dict[str, Any]], device: str, dest: Path, record: RunRecord) -> None:
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from codesearch_core.train.sampling import Renderer

    tokenizer = AutoTokenizer.from_pretrained(spec.model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    renderer = Renderer(tokenizer)
    limit = context_limit(spec.model, tokenizer, spec.settings.max_length)
    encoded = [renderer.row(r) for r in rows]
    fit = fit_context([len(e["input_ids"]) for e in encoded], limit)
    if fit.left_out:
        print(f"note: {fit.message()}", file=sys.stderr)
    record.context = {**fit.to_dict(), "chat_template": renderer.template}
    kept = [encoded[i] for i in fit.kept]
    trainer = SFTTrainer(
        model=spec.model,
        processing_class=tokenizer,
        train_dataset=Dataset.from_list(kept),
        args=SFTConfig(
            **_train_args(spec, device, dest.parent), max_length=limit, completion_only_loss=True
        ),
        callbacks=[_step_lines()],
    )
    trainer.train()
    record.metrics.update(_losses(trainer.state.log_history))
    trainer.save_model(str(dest))
    tokenizer.save_pretrained(str(dest))


def rft(spec: Spec, device: str, dest: Path, record: RunRecord) -> None:
    from codesearch_core import gym
    from codesearch_core.corpora import blueprint_from_dict
    from codesearch_core.engines import SamplingSettings
    from codesearch_core.train.rft import verified_rows

    s = spec.settings
    settings = gym.GymSettings(max_turns=s.max_turns)
    blueprints = [blueprint_from_dict(d) for d in _read_jsonl(Path(spec.work) / TASKS_NAME)]
    tasks = gym.as_tasks(blueprints).tasks
    sampling = SamplingSettings(temperature=s.temperature, top_p=1.0, max_tokens=s.max_new_tokens,
                                seed=s.seed)  # fmt: skip
    policy, workers, close = _sampler(spec, device, sampling)
    try:
        started = time.monotonic()
        played = list(gym.play_here(policy, settings, workers=workers)(tasks, s.k, None))
        record.metrics["rollout_seconds"] = round(time.monotonic() - started, 1)
    finally:
        close()
    rows, tally = verified_rows(played, s.min_reward, settings)
    failures = list(getattr(policy, "failures", ()))[:5]  # a model's failed requests, the first
    record.rows = {**record.rows, "rollouts": tally.to_dict(), "failures": failures}
    print(tally.line(s.min_reward), file=sys.stderr)
    if not rows:
        raise NothingToTrain(
            f"RFT kept no episode, nothing to train on: {tally.line(s.min_reward)}; try more "
            "episodes (--k), a lower --min-reward, or a model trained with SFT first"
        )
    sft(spec, rows, device, dest, record)


def _sampler(spec: Spec, device: str, sampling: Any) -> tuple[Any, int, Any]:
    """The policy that plays RFT's episodes, how many play at once, and how to free it."""
    from codesearch_core import gym

    if spec.sampler == "reference":  # no model: the blueprints' own calls (day-one agent data)
        return gym.ReferencePolicy(), 2, lambda: None
    if spec.sampler == "vllm":
        from codesearch_core.engines import VllmSettings, get_vllm_engine, shutdown_vllm_engine

        engine = get_vllm_engine(VllmSettings(model=spec.model, tensor_parallel_size=1,
                                              gpu_memory_utilization=0.5, seed=spec.settings.seed))  # fmt: skip
        return gym.ChatPolicy(gym.VllmChat(engine, sampling)), 64, shutdown_vllm_engine
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from codesearch_core.train.sampling import HfChat, Renderer

    tokenizer = AutoTokenizer.from_pretrained(spec.model)
    loaded: Any = AutoModelForCausalLM.from_pretrained(spec.model)
    model = loaded.to(device)
    model.eval()
    limit = context_limit(spec.model, tokenizer, spec.settings.max_length)
    backend = HfChat(model, Renderer(tokenizer), sampling, limit, spec.model)

    def close() -> None:
        backend.lm = None
        if device == "cuda":
            torch.cuda.empty_cache()

    return gym.ChatPolicy(backend), 1, close


def grpo(spec: Spec, device: str, dest: Path, record: RunRecord) -> None:
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer
    from trl.chat_template_utils import add_response_schema, qwen2_5_chat_template

    from codesearch_core import gym
    from codesearch_core.corpora import blueprint_from_dict

    s = spec.settings
    trl_env = gym.trl_adapter()
    settings = gym.GymSettings(max_turns=s.max_turns)
    blueprints = [blueprint_from_dict(d) for d in _read_jsonl(Path(spec.work) / TASKS_NAME)]
    tasks = gym.as_tasks(blueprints).tasks
    tokenizer = AutoTokenizer.from_pretrained(spec.model)
    template = "model"
    try:  # TRL must parse the model's tool calls: a template it knows, else Qwen2.5's (Hermes)
        add_response_schema(tokenizer)
    except Exception:  # TRL raises for a template it does not know
        tokenizer.chat_template = qwen2_5_chat_template
        add_response_schema(tokenizer)
        template = "qwen2.5 (hermes)"
    rows = trl_env.trl_dataset(tasks, settings)
    tools = gym.gym_tools()
    limit = context_limit(spec.model, tokenizer, s.max_length) - s.max_completion_length
    tokens = [_prompt_tokens(tokenizer, r["prompt"], tools) for r in rows]
    fit = fit_context(tokens, limit, "prompt")
    if fit.left_out:
        print(f"note: {fit.message()}", file=sys.stderr)
    record.context = {**fit.to_dict(), "chat_template": template}
    episodes: list[Any] = []
    components = trl_env.component_rewards()
    trainer = GRPOTrainer(
        model=spec.model,
        processing_class=tokenizer,
        reward_funcs=components,
        train_dataset=Dataset.from_list([rows[i] for i in fit.kept]),
        environment_factory=trl_env.environment_factory(tasks, settings, log=episodes),
        args=GRPOConfig(
            **_train_args(spec, device, dest.parent),
            num_generations=s.num_generations,
            max_completion_length=s.max_completion_length,
            max_tool_calling_iterations=settings.max_turns,
            reward_weights=[0.0] * len(components),
        ),
        callbacks=[_step_lines()],
    )
    trainer.train()
    rewards = [h["reward"] for h in trainer.state.log_history if "reward" in h]
    record.metrics.update(_losses(trainer.state.log_history))
    record.metrics.update({"episodes": len(episodes), "mean_reward_by_step": rewards,
                           "submitted": sum(e.end_reason == "submitted" for e in episodes)})  # fmt: skip
    trainer.save_model(str(dest))
    tokenizer.save_pretrained(str(dest))


def _prompt_tokens(tokenizer: Any, prompt: list[dict[str, Any]], tools: list[Any]) -> int:
    text = tokenizer.apply_chat_template(prompt, tools=tools, tokenize=False,
                                         add_generation_prompt=True)  # fmt: skip
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def run(spec: Spec) -> int:
    """One run, from its spec to OUT and OUT.run.json (module docstring)."""
    out, work = Path(spec.out), Path(spec.work)
    dest = work / MODEL_DIR
    if out.exists():  # prepare refused it; another run made it since: leave it and its record
        print(f"error: {out} exists: a run never writes over a model", file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)
        return EXIT_BAD_INPUT
    record = RunRecord(mode=spec.mode, model=spec.model_given or spec.model, model_path=spec.model,
                       dataset=spec.dataset,
                       dataset_card_sha256=spec.card_sha256, settings=spec.to_dict()["settings"],
                       out=str(out), rows=dict(spec.rows), started=_now())  # fmt: skip
    record.settings["sampler"] = spec.sampler
    started = time.monotonic()
    where = record_path(out)
    try:
        record.model_sha256 = folder_sha256(Path(spec.model))
        record.device = pick_device(spec.device)
        write_record(where, record)
        print(
            f"training ({spec.mode}) {spec.model} on {record.device} into {out}…", file=sys.stderr
        )
        if spec.mode == "sft":
            sft(spec, _read_jsonl(work / ROWS_NAME), record.device, dest, record)
        elif spec.mode == "rft":
            rft(spec, record.device, dest, record)
        else:
            grpo(spec, record.device, dest, record)
        shutil.rmtree(work / "checkpoints", ignore_errors=True)
        dest.rename(out)  # the one step that makes OUT: a whole model or none
        record.output_sha256 = folder_sha256(out)
        record.status = "done"
        code = EXIT_OK
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not stop the clean-up
        record.status, code = "interrupted", EXIT_INTERRUPTED
        print("interrupted: no model written", file=sys.stderr)
    except NothingToTrain as err:
        record.status, record.error, code = "nothing_to_train", str(err), EXIT_PROBLEMS
        print(f"error: {err}", file=sys.stderr)
    except CodesearchError as err:
        record.status, record.error, code = "failed", str(err), EXIT_BAD_INPUT
        print(f"error: {err}", file=sys.stderr)
    except BaseException as err:
        record.status, record.error = "failed", f"{type(err).__name__}: {err}"
        _finish(record, started, where, work)
        raise
    _finish(record, started, where, work)
    if code == EXIT_OK:
        print(f"done: {out} (sha256 {record.output_sha256[:12]}…), record {where}", file=sys.stderr)
    return code


def _finish(record: RunRecord, started: float, where: Path, work: Path) -> None:
    record.finished = _now()
    record.seconds = round(time.monotonic() - started, 1)
    shutil.rmtree(work, ignore_errors=True)
    if where.parent.is_dir():
        write_record(where, record)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m codesearch_core.train.worker SPEC.json", file=sys.stderr)
        return EXIT_BAD_INPUT
    # A Ctrl-C (or SIGTERM) at any moment is a KeyboardInterrupt `run` turns into a clean stop,
    # even when this process was started with SIGINT ignored (a shell's background job).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    return run(Spec.read(Path(args[0])))


if __name__ == "__main__":
    raise SystemExit(main())
