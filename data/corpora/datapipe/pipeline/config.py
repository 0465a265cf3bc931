"""Job configuration: one YAML file per job under configs/jobs/.

A minimal job file looks like::

    job: train_churn
    schedule: "0 4 * * *"
    resources:
      gpu: true
      memory: 24Gi
    output_dir: /mnt/shared/models/churn
    cache_dir: /mnt/scratch/churn

`output_dir` defaults to /mnt/shared/<job> when it is left out.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

CONFIG_DIR = Path(os.environ.get("DATAPIPE_CONFIG_DIR", "configs/jobs"))
DEFAULT_ROOT = Path(os.environ.get("DATAPIPE_SHARED_ROOT", "/srv/datapipe"))


@dataclass(frozen=True)
class Resources:
    gpu: bool = False
    memory: str = "4Gi"
    cpus: int = 2


@dataclass(frozen=True)
class JobConfig:
    job: str
    schedule: str | None = None
    resources: Resources = field(default_factory=Resources)
    output_dir: Path | None = None
    cache_dir: Path | None = None
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def resolved_output_dir(self) -> Path:
        return self.output_dir or DEFAULT_ROOT / self.job


def _resources(raw: dict[str, Any] | None) -> Resources:
    raw = raw or {}
    return Resources(
        gpu=bool(raw.get("gpu", False)),
        memory=str(raw.get("memory", "4Gi")),
        cpus=int(raw.get("cpus", 2)),
    )


def parse_job_config(raw: dict[str, Any]) -> JobConfig:
    if "job" not in raw:
        raise ValueError("job config has no 'job' key")
    out = raw.get("output_dir")
    cache = raw.get("cache_dir")
    return JobConfig(
        job=raw["job"],
        schedule=raw.get("schedule"),
        resources=_resources(raw.get("resources")),
        output_dir=Path(out) if out else None,
        cache_dir=Path(cache) if cache else None,
        params=dict(raw.get("params", {})),
    )


def load_job_config(name_or_path: str | Path) -> JobConfig:
    path = Path(name_or_path)
    if not path.suffix:
        path = CONFIG_DIR / f"{name_or_path}.yaml"
    with path.open(encoding="utf-8") as fh:
        return parse_job_config(yaml.safe_load(fh))
