"""Session features built from the sessionized events table."""

from __future__ import annotations

import pandas as pd

from pipeline.features.registry import feature
from pipeline.utils.timing import timed


@feature(name="sessions_7d", entity="user", dtype="int32")
def sessions_7d(sessions: pd.DataFrame, ds: str) -> pd.Series:
    """Sessions started in the seven days up to the run date."""
    window = sessions[sessions["session_date"] > pd.Timestamp(ds) - pd.Timedelta(days=7)]
    return window.groupby("user_id").size().astype("int32")


@feature(name="median_session_minutes", entity="user", dtype="float32")
def median_session_minutes(sessions: pd.DataFrame, ds: str) -> pd.Series:
    """Median session length in minutes over the last 28 days."""
    with timed("median_session_minutes"):
        recent = sessions[sessions["session_date"] > pd.Timestamp(ds) - pd.Timedelta(days=28)]
        minutes = recent["duration_s"] / 60.0
        return minutes.groupby(recent["user_id"]).median().astype("float32")


@feature(name="avg_session_minutes", entity="user", dtype="float32", version=2)
def avg_session_minutes(sessions: pd.DataFrame, ds: str) -> pd.Series:
    """
    Deprecated: use ``median_session_minutes``; the mean is dominated by idle tabs.

    Mean session length in minutes over the last 28 days.
    """
    recent = sessions[sessions["session_date"] > pd.Timestamp(ds) - pd.Timedelta(days=28)]
    print(recent.describe())
    return (recent["duration_s"] / 60.0).groupby(recent["user_id"]).mean().astype("float32")


@feature(name="distinct_devices_30d", entity="user", dtype="int16")
def distinct_devices_30d(sessions: pd.DataFrame, ds: str) -> pd.Series:
    """Distinct device fingerprints seen in the last 30 days."""
    recent = sessions[sessions["session_date"] > pd.Timestamp(ds) - pd.Timedelta(days=30)]
    return recent.groupby("user_id")["device_id"].nunique().astype("int16")
