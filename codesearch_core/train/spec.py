"""What one training run is asked to do, as the CLI hands it to the worker (a JSON file in the
run's work folder): the mode, the model, where the result goes, the rows or tasks, the settings."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

MODES: Final = ("sft", "rft", "grpo")
DEVICES: Final = ("auto", "cpu", "cuda")
SAMPLERS: Final = ("hf", "vllm", "reference")
SPEC_NAME: Final = "spec.json"
ROWS_NAME: Final = "rows.jsonl"
TASKS_NAME: Final = "tasks.jsonl"
MODEL_DIR: Final = "model"


@dataclass(frozen=True)
class Settings:
    """The knobs a run records. `max_steps` 0 means `epochs` over the rows."""

    epochs: float = 1.0
    max_steps: int = 0
    learning_rate: float = 5e-5
    batch_size: int = 4
    grad_accum: int = 1
    max_length: int = 0  # 0: the model's own context, at most 4096
    seed: int = 0
    # RFT: episodes per task, the reward an episode needs to be kept, sampling
    k: int = 4
    min_reward: float = 0.9
    temperature: float = 1.0
    max_new_tokens: int = 384
    # GRPO
    num_generations: int = 4
    max_completion_length: int = 512
    max_turns: int = 4

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Spec:
    mode: str
    model: str
    out: str
    work: str
    dataset: str
    card_sha256: str
    device: str = "auto"
    #: Who plays RFT's rollouts: hf (transformers' generate), vllm, or reference (no model).
    sampler: str = "hf"
    settings: Settings = field(default_factory=Settings)
    rows: dict[str, Any] = field(default_factory=dict)  # counts, left out by reason
    #: `--model` as the user gave it (a registered name); `model` is the folder it resolved to.
    model_given: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "settings": self.settings.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Spec:
        values = dict(data)
        values["settings"] = Settings(**values.get("settings", {}))
        return cls(**values)

    def write(self) -> Path:
        path = Path(self.work) / SPEC_NAME
        path.write_text(json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n")
        return path

    @classmethod
    def read(cls, path: Path) -> Spec:
        return cls.from_dict(json.loads(path.read_text(encoding="utf-8")))
