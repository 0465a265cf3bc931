from __future__ import annotations

import pandas as pd
import pytest

from pipeline.config import JobConfig


@pytest.fixture
def users() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "user_id": [1, 2, 3],
            "signup_at": ["2024-01-01", "2024-03-15", "2024-04-30"],
            "plan": ["free", "pro", "enterprise"],
            "seats": [1, 1, 40],
        }
    )


@pytest.fixture
def job_config() -> JobConfig:
    return JobConfig(job="test_job", params={"dsn": "postgresql://localhost/test"})
