"""Incoming-webhook client for the #growth-data Slack channel.

Messages that must wake someone up put "<!here>" (rendered as @here) on their first
line; everything else is posted quietly. See pipeline/notify/alerts.py for the templates.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import requests

from pipeline.utils.log import get_logger

log = get_logger(__name__)


@dataclass(frozen=True)
class SlackWebhook:
    url: str
    channel: str = "#growth-data"
    timeout_s: float = 10.0

    @classmethod
    def from_env(cls) -> "SlackWebhook":
        url = os.environ.get("SLACK_WEBHOOK_URL")
        if not url:
            raise RuntimeError("SLACK_WEBHOOK_URL is not set")
        return cls(url=url)

    def post(self, text: str) -> None:
        resp = requests.post(
            self.url,
            json={"channel": self.channel, "text": text},
            timeout=self.timeout_s,
            verify=True,
        )
        if resp.status_code != 200:
            log.warning("slack webhook returned %s: %s", resp.status_code, resp.text[:200])
