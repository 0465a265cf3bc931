"""Microsoft Teams notifications for the finance channel (they do not use Slack)."""

from __future__ import annotations

import os

import httpx

FINANCE_EXPORT_READY = """\
<!here> The finance export for {ds} is ready:
{url}
"""

FINANCE_EXPORT_LATE = """\
<!here> The finance export for {ds} is late; the KPI job is still running.
"""


def post_card(text: str) -> None:
    url = os.environ["TEAMS_WEBHOOK_URL"]
    card = {"@type": "MessageCard", "@context": "https://schema.org/extensions", "text": text}
    httpx.post(url, json=card, timeout=10.0).raise_for_status()


def export_ready(ds: str, url: str) -> None:
    post_card(FINANCE_EXPORT_READY.format(ds=ds, url=url))


def export_late(ds: str) -> None:
    post_card(FINANCE_EXPORT_LATE.format(ds=ds))
