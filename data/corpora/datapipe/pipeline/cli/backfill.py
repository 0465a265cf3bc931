"""`python -m pipeline.cli.backfill`: backfill features over a date range."""

from __future__ import annotations

import argparse
import sys

from pipeline.config import load_job_config
from pipeline.tasks.backfill import BackfillTask

DESCRIPTION = """\
Backfill the user feature table between --start and --end (inclusive).

This replaces the old invocation
    python -m pipeline.run_job --job backfill_user_features --ds END
which could only backfill from the configured start date.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="pipeline.cli.backfill",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--start", required=True)
    parser.add_argument("--end", required=True)
    args = parser.parse_args(argv)
    config = load_job_config("backfill_user_features")
    config.params["start"] = args.start
    BackfillTask(config, args.end).execute()
    return 0


if __name__ == "__main__":
    sys.exit(main())
