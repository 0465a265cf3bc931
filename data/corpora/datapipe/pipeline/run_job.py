"""Deprecated entry point kept for old cron entries.

`python -m pipeline.run_job --job NAME` forwards to `python -m pipeline.cli.run`.
"""

from __future__ import annotations

import sys
import warnings

from pipeline.cli.run import main

if __name__ == "__main__":
    warnings.warn("pipeline.run_job is deprecated; use pipeline.cli.run", DeprecationWarning,
                  stacklevel=1)
    sys.exit(main(sys.argv[1:]))
