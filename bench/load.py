"""Sending signed events to the app the way Slack does, many at once, timing each response."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import aiohttp

from fakes.event_requests import event_callback, signed_event_request

REQUEST_TIMEOUT = 30.0


@dataclass(frozen=True)
class Delivery:
    status: int
    seconds: float  # from the first byte sent to the whole response read


def send_events(url: str, events: list[dict[str, Any]], concurrency: int) -> list[Delivery]:
    """POST each inner event, wrapped and signed, to `url`/slack/events with at most
    `concurrency` requests in flight; deliveries in the order of `events`."""
    return asyncio.run(_send_all(f"{url}/slack/events", events, concurrency))


async def _send_all(
    endpoint: str, events: list[dict[str, Any]], concurrency: int
) -> list[Delivery]:
    results: list[Delivery | None] = [None] * len(events)
    queue: asyncio.Queue[int] = asyncio.Queue()
    for position in range(len(events)):
        queue.put_nowait(position)
    timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def worker() -> None:
            while not queue.empty():
                position = queue.get_nowait()
                # Signed just before sending: Bolt rejects requests more than 5 minutes old.
                body, headers = signed_event_request(event_callback(events[position]))
                started = time.perf_counter()
                async with session.post(endpoint, data=body, headers=headers) as response:
                    await response.read()
                results[position] = Delivery(response.status, time.perf_counter() - started)

        await asyncio.gather(*(worker() for _ in range(min(concurrency, len(events)))))
    return [r for r in results if r is not None]
