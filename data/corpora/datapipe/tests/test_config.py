from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pipeline.config import load_job_config, parse_job_config


def test_load_job_config_reads_resources(tmp_path: Path) -> None:
    path = tmp_path / "train_churn.yaml"
    path.write_text(textwrap.dedent("""\
        job: train_churn
        schedule: "0 4 * * *"
        resources:
          gpu: true
          memory: 24Gi
        output_dir: /mnt/shared/models/churn
        cache_dir: /mnt/scratch/churn
    """))
    config = load_job_config(path)
    assert config.resources.gpu
    assert config.resources.memory == "24Gi"


def test_output_dir_defaults_under_shared_root(tmp_path: Path) -> None:
    path = tmp_path / "cache_refresh.yaml"
    path.write_text("job: cache_refresh\n")
    config = load_job_config(path)
    assert config.resolved_output_dir.name == "cache_refresh"


def test_parse_requires_job_key() -> None:
    with pytest.raises(ValueError, match="no 'job' key"):
        parse_job_config({"schedule": "@daily"})


def test_params_are_copied() -> None:
    raw = {"job": "x", "params": {"region": "eu"}}
    config = parse_job_config(raw)
    raw["params"]["region"] = "us"
    assert config.params == {"region": "eu"}
