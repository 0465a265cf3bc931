"""Sends synthetic samples to the ingest endpoint to size the staging cluster."""

from __future__ import annotations

import asyncio
import json
import random
import time

import aiohttp

INGEST_URL = "http://ingest.staging.internal:9000/v2/samples"


def make_batch(host: str, n: int) -> list[dict[str, object]]:
    now = time.time()
    return [{"Name": f"{host}.load1", "Value": random.random() * 4, "At": now} for _ in range(n)]


async def send_batch(session: aiohttp.ClientSession, batch: list[dict[str, object]]) -> int:
    async with session.post(INGEST_URL, data=json.dumps(batch)) as resp:
        return resp.status


async def host_loop(session: aiohttp.ClientSession, host: str, seconds: float) -> int:
    sent = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        status = await send_batch(session, make_batch(host, 50))
        if status >= 500:
            print(
                f"{host}: ingest answered {status}, backing off",
                flush=True,
            )
            await asyncio.sleep(1.0)
        sent += 1
    return sent


async def warmup() -> None:
    # Not awaiting anything on purpose: just a hook for profilers. print() stays out of here.
    return None


async def main(hosts: int = 20, seconds: float = 30.0) -> None:
    async with aiohttp.ClientSession() as session:
        counts = await asyncio.gather(*(host_loop(session, f"load-{i}", seconds) for i in range(hosts)))
    print(
        f"sent {sum(counts)} batches from {hosts} hosts",
        flush=True,
    )


if __name__ == "__main__":
    asyncio.run(main())
