"""Command-line entry point: run one task for one partition date."""

from __future__ import annotations

import argparse
import importlib
import sys

from pipeline.config import load_job_config
from pipeline.utils.log import get_logger

log = get_logger(__name__)

TASKS = {
    "train_churn": "pipeline.tasks.train_churn:TrainChurnTask",
    "backfill_user_features": "pipeline.tasks.backfill:BackfillTask",
    "cache_refresh": "pipeline.tasks.cache_refresh:CacheRefreshTask",
}

EPILOG = """\
examples:
  python -m pipeline.cli.run --job train_churn --ds 2024-05-01
  python -m pipeline.run_job --job train_churn --ds 2024-05-01   (old form, still accepted)
  python -m pipeline.run_job --job cache_refresh --dry-run
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pipeline.cli.run",
        description="Run one datapipe task for one partition date.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--job", required=True, choices=sorted(TASKS))
    parser.add_argument("--ds", help="partition date, YYYY-MM-DD (default: yesterday)")
    parser.add_argument("--dry-run", action="store_true",
                        help="resolve the config, log it and stop (nothing is print()ed)")
    return parser


def _task_class(job: str):
    module_name, _, cls_name = TASKS[job].partition(":")
    return getattr(importlib.import_module(module_name), cls_name)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    config = load_job_config(args.job)
    if args.dry_run:
        log.info("config for %s: %s", args.job, config)
        return 0
    task = _task_class(args.job)(config, args.ds)
    result = task.execute()
    log.info("result: %s", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
