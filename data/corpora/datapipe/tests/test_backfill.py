from __future__ import annotations

import textwrap

import yaml

from pipeline.config import parse_job_config
from pipeline.tasks.backfill import BackfillTask

CONFIG = textwrap.dedent("""\
    job: backfill_user_features
    params:
      dsn: postgresql://localhost/test
      start: "2024-04-28"
    output_dir: /mnt/shared/backfill
""")


def test_dates_cover_range_inclusive() -> None:
    config = parse_job_config(yaml.safe_load(CONFIG))
    task = BackfillTask(config, "2024-05-01")
    assert task.dates() == ["2024-04-28", "2024-04-29", "2024-04-30", "2024-05-01"]


def test_single_day_when_no_start(job_config, monkeypatch) -> None:
    monkeypatch.setenv("SLACK_WEBHOOK_URL", "https://hooks.example.com/x")
    task = BackfillTask(job_config, "2024-05-01")
    assert task.dates() == ["2024-05-01"]
