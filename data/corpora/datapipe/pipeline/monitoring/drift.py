"""Feature drift monitoring: compare today's feature distribution with the training window."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from pipeline.notify.slack import SlackWebhook
from pipeline.utils.log import get_logger

log = get_logger(__name__)

BASELINE_SQL_TEMPLATE = """
    SELECT features
    FROM feature_store.user_daily
    WHERE ds >= '{start}'
      AND ds <= '{end}'
"""

DRIFT_ALERT = """\
<!here> Feature drift on *{feature}*: PSI {psi:.3f} (threshold {threshold:.2f})
Training window {start}..{end}, scored on {ds}.
"""


def psi(expected: np.ndarray, actual: np.ndarray, bins: int = 10) -> float:
    """Population stability index between two samples."""
    edges = np.quantile(expected, np.linspace(0, 1, bins + 1))
    e = np.histogram(expected, edges)[0] / len(expected) + 1e-6
    a = np.histogram(actual, edges)[0] / len(actual) + 1e-6
    return float(np.sum((a - e) * np.log(a / e)))


def check_drift(baseline: pd.DataFrame, today: pd.DataFrame, ds: str, start: str, end: str,
                threshold: float = 0.2) -> list[str]:
    drifted = []
    for name in baseline.columns:
        started = time.perf_counter()
        value = psi(baseline[name].to_numpy(), today[name].to_numpy())
        elapsed_us = (time.perf_counter() - started) * 1e6
        log.debug("psi %s = %.4f (scored in %.0f μs)", name, value, elapsed_us)
        if value > threshold:
            drifted.append(name)
            SlackWebhook.from_env().post(
                DRIFT_ALERT.format(feature=name, psi=value, threshold=threshold,
                                   start=start, end=end, ds=ds)
            )
    return drifted
