"""User-level features, computed daily from the users snapshot."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.features.registry import feature
from pipeline.ingest.warehouse import WarehouseClient

LAST_LOGIN_SQL = """
    SELECT *
    FROM analytics.user_logins
    WHERE login_date BETWEEN %(start)s AND %(ds)s
"""


@feature(name="days_since_signup", entity="user", dtype="int32")
def days_since_signup(users: pd.DataFrame, ds: str) -> pd.Series:
    """Whole days between signup and the run date."""
    run_date = pd.Timestamp(ds)
    return (run_date - pd.to_datetime(users["signup_at"])).dt.days.astype("int32")


@feature(name="is_paying", entity="user", dtype="bool")
def is_paying(users: pd.DataFrame, ds: str) -> pd.Series:
    """True when the user has an active paid plan on the run date."""
    return users["plan"].isin(["pro", "team", "enterprise"])


@feature(name="plan_tier", entity="user", dtype="int8")
def plan_tier(users: pd.DataFrame, ds: str) -> pd.Series:
    """
    Deprecated: use ``is_paying`` and ``seat_count`` instead.

    Ordinal encoding of the plan (free=0 ... enterprise=3). Kept for the v3 churn model.
    """
    tiers = {"free": 0, "pro": 1, "team": 2, "enterprise": 3}
    return users["plan"].map(tiers).fillna(0).astype("int8")


@feature(name="seat_count", entity="user", dtype="int32")
def seat_count(users: pd.DataFrame, ds: str) -> pd.Series:
    """Seats on the user's workspace plan (1 for personal plans)."""
    return users["seats"].fillna(1).astype("int32")


@feature(name="logins_7d", entity="user", dtype="int32")
def logins_7d(users: pd.DataFrame, ds: str) -> pd.Series:
    """
    Deprecated: use ``session_features.sessions_7d``; logins double count SSO refreshes.

    Number of logins over the seven days up to and including the run date.
    """
    start = (pd.Timestamp(ds) - pd.Timedelta(days=6)).date().isoformat()
    rows = WarehouseClient().fetch(LAST_LOGIN_SQL, {"start": start, "ds": ds})
    logins = pd.DataFrame(rows)
    if logins.empty:
        return pd.Series(np.zeros(len(users), dtype="int32"), index=users.index)
    counts = logins.groupby("user_id").size()
    return users["user_id"].map(counts).fillna(0).astype("int32")
