from __future__ import annotations

import textwrap
from pathlib import Path
from unittest import mock

import pandas as pd

from pipeline.config import load_job_config
from pipeline.tasks.train_churn import TrainChurnTask


def _write_config(directory: Path) -> Path:
    path = directory / "train_churn.yaml"
    path.write_text(textwrap.dedent("""\
        job: train_churn
        params:
          dsn: postgresql://localhost/test
        output_dir: /mnt/shared/models/churn-test
    """))
    return path


def test_training_frame_formats_dates(tmp_path: Path) -> None:
    config = load_job_config(_write_config(tmp_path))
    task = TrainChurnTask(config, "2024-05-01")
    conn = mock.MagicMock()
    cursor = conn.cursor.return_value.__enter__.return_value
    cursor.fetchall.return_value = []
    cursor.description = []
    frame = task._training_frame(conn)
    sql = cursor.execute.call_args.args[0]
    assert "'2024-05-01'" in sql
    assert "'2024-05-31'" in sql
    assert isinstance(frame, pd.DataFrame)


def test_task_name(job_config) -> None:
    assert TrainChurnTask(job_config, "2024-05-01").name == "train_churn"
