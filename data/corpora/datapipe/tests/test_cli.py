from __future__ import annotations

import pytest

from pipeline.cli.run import build_parser


def test_parser_accepts_known_jobs() -> None:
    args = build_parser().parse_args(["--job", "train_churn", "--ds", "2024-05-01"])
    assert args.job == "train_churn"


def test_parser_rejects_unknown_job() -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--job", "nope"])


def test_old_entry_point_still_importable() -> None:
    # `python -m pipeline.run_job` must keep working for the cron entries on the old hosts.
    import pipeline.run_job  # noqa: F401
