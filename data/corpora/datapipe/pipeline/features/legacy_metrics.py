"""Metrics from the v2 reporting stack, still imported by two dashboards.

These are plain helpers, not registered features.
"""

from __future__ import annotations

import pandas as pd


def weekly_active_ratio(events: pd.DataFrame) -> float:
    """
    Deprecated: use the ``wau_over_mau`` column of the engagement report.

    Share of monthly actives that were active in the last week.
    """
    last_week = events[events["event_date"] >= events["event_date"].max() - pd.Timedelta(days=6)]
    mau = events["user_id"].nunique()
    return last_week["user_id"].nunique() / mau if mau else 0.0


def stickiness(events: pd.DataFrame) -> float:
    """
    Deprecated: the DAU/MAU definition moved to sql/reports/engagement.sql.

    Average daily actives over monthly actives.
    """
    daily = events.groupby("event_date")["user_id"].nunique().mean()
    mau = events["user_id"].nunique()
    return float(daily / mau) if mau else 0.0


def churned_users(users: pd.DataFrame, inactive_days: int = 30) -> pd.Series:
    """Users whose last event is older than `inactive_days`."""
    cutoff = pd.Timestamp.utcnow().normalize() - pd.Timedelta(days=inactive_days)
    return users["last_event_at"] < cutoff
