"""A run prepared without torch: the arguments checked, the model found, the data set opened, the
rows (SFT) or tasks (RFT, GRPO) written into the run's work folder with the spec the worker reads.
Everything a user can get wrong fails here, in the studio's venv, in a second: not after torch has
loaded and a model is half-read."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codesearch_core.corpora import blueprint_to_dict
from codesearch_core.errors import InputFileError
from codesearch_core.store import Store
from codesearch_core.train.data import (
    combine,
    episode_rows,
    open_dataset,
    read_split,
    sft_rows,
    split_blueprints,
    write_rows,
)
from codesearch_core.train.spec import (
    DEVICES,
    MODES,
    ROWS_NAME,
    SAMPLERS,
    TASKS_NAME,
    Settings,
    Spec,
)
from codesearch_core.weights import resolve_model

#: Opens the store for `--episodes` (the CLI's, which says when it waits for a lock).
StoreOpener = Callable[[], Store]


def check_settings(mode: str, device: str, sampler: str, s: Settings) -> None:
    """Bad numbers are argument errors, before anything loads."""
    if mode not in MODES:
        raise InputFileError(f"unknown mode {mode!r}: one of {', '.join(MODES)}")
    if device not in DEVICES:
        raise InputFileError(f"--device {device!r}: one of {', '.join(DEVICES)}")
    if sampler not in SAMPLERS:
        raise InputFileError(f"--sampler {sampler!r}: one of {', '.join(SAMPLERS)}")
    positive = {"--batch-size": s.batch_size, "--grad-accum": s.grad_accum, "--k": s.k,
                "--max-new-tokens": s.max_new_tokens, "--num-generations": s.num_generations,
                "--max-completion-length": s.max_completion_length, "--max-turns": s.max_turns}  # fmt: skip
    for flag, value in positive.items():
        if value < 1:
            raise InputFileError(f"{flag} must be at least 1, got {value}")
    if s.max_steps < 0 or s.max_length < 0:
        raise InputFileError("--max-steps and --max-length are 0 (none) or more")
    if s.max_steps == 0 and s.epochs <= 0:
        raise InputFileError(f"--epochs must be above 0 without --max-steps, got {s.epochs}")
    if not 0 < s.learning_rate < 1:
        raise InputFileError(f"--lr must be in (0, 1), got {s.learning_rate}")
    if not 0.0 <= s.min_reward <= 1.0:
        raise InputFileError(f"--min-reward must be in [0, 1], got {s.min_reward}")
    if not 0.0 <= s.temperature <= 2.0:
        raise InputFileError(f"--temperature must be in [0, 2], got {s.temperature}")
    if mode == "grpo":
        if s.num_generations < 2:
            raise InputFileError("--num-generations must be at least 2: GRPO compares a group")
        if (s.batch_size * s.grad_accum) % s.num_generations:
            raise InputFileError(
                f"--batch-size x --grad-accum ({s.batch_size * s.grad_accum}) must be a multiple "
                f"of --num-generations ({s.num_generations}): each prompt's group trains together"
            )
        if s.max_length and s.max_length <= s.max_completion_length:
            raise InputFileError("--max-length must leave room for the prompt beyond "
                                 "--max-completion-length")  # fmt: skip


def find_model(model: str) -> str:
    """A registered name (`codesearch model add`) becomes its pinned folder (`weights`); a path
    must be a Hugging Face model folder here: training never downloads."""
    resolved = resolve_model(model)
    path = Path(resolved).expanduser()
    if not (path / "config.json").is_file():
        raise InputFileError(
            f"--model {model!r}: not a model folder with a config.json, nor a registered model "
            "(`codesearch model list`); training reads local weights only"
        )
    return str(path.resolve())


def work_folder(out: Path) -> Path:
    """`.OUT.partial` beside OUT: the worker trains there and renames the model to OUT at the end."""
    return out.with_name(f".{out.name}.partial")


def prepare(
    mode: str,
    model: str,
    data: Path,
    out: Path,
    *,
    settings: Settings,
    device: str = "auto",
    sampler: str = "hf",
    limit: int = 0,
    episodes: StoreOpener | None = None,
) -> Spec:
    """Check everything, write the work folder and return the spec (module docstring). `limit`:
    at most that many items or tasks of the split, in order (0: all)."""
    check_settings(mode, device, sampler, settings)
    if limit < 0:
        raise InputFileError(f"--limit must be 0 (all) or more, got {limit}")
    if out.exists():
        raise InputFileError(f"{out} exists: a run never writes over a model; choose another --out")
    found = find_model(model)
    ref = open_dataset(data)
    items = read_split(ref, "train")
    if limit:
        items = items[:limit]
    work = work_folder(out.resolve())
    shutil.rmtree(work, ignore_errors=True)  # a killed run's leftovers: this run's name, ours
    rows: dict[str, Any] = {}
    try:
        work.mkdir(parents=True)
        if mode == "sft":
            built = sft_rows(items)
            if episodes is not None:
                with episodes() as store:
                    built = combine(built, episode_rows(store))
            if not built.rows:
                raise InputFileError(
                    f"{data}: the train split has no one-call item or episode to train on"
                )
            write_rows(work / ROWS_NAME, built.rows)
            rows = {"rows": len(built.rows), "items": built.items, "episodes": built.episodes,
                    "left_out": built.left_out}  # fmt: skip
        else:
            blueprints = split_blueprints(items)
            if not blueprints:
                raise InputFileError(f"{data}: the train split has no task")
            write_rows(work / TASKS_NAME, [blueprint_to_dict(b) for b in blueprints])
            rows = {"tasks": len(blueprints)}
        spec = Spec(mode=mode, model=found, out=str(out.resolve()), work=str(work),
                    dataset=str(ref.folder.resolve()), card_sha256=ref.card_sha256, device=device,
                    sampler=sampler, settings=settings, rows=rows, model_given=model)  # fmt: skip
        spec.write()
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return spec


def describe(spec: Spec) -> str:
    return json.dumps({"mode": spec.mode, "model": spec.model, "out": spec.out, **spec.rows})
