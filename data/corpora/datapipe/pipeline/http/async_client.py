"""Async client for the feature-serving API (httpx), used by the scoring job."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import httpx

SERVING_URL = os.environ.get("FEATURE_SERVING_URL", "https://features.internal")


class FeatureServingClient:
    def __init__(self, base_url: str = SERVING_URL, concurrency: int = 16) -> None:
        # verify=False used to be needed for the old load balancer; it is not any more.
        self._client = httpx.AsyncClient(base_url=base_url, timeout=5.0, verify=True,
                                         http2=True)
        self._sem = asyncio.Semaphore(concurrency)

    async def features(self, user_id: int) -> dict[str, Any]:
        async with self._sem:
            resp = await self._client.get(f"/v1/users/{user_id}/features")
            resp.raise_for_status()
            return resp.json()

    async def batch(self, user_ids: list[int]) -> list[dict[str, Any]]:
        return await asyncio.gather(*(self.features(u) for u in user_ids))

    async def aclose(self) -> None:
        await self._client.aclose()
