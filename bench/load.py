"""Sending signed events to the app the way Slack does, many at once, timing each response:
a fixed number in flight (`send_events`), or each at its own time (`send_open_loop`)."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import Any

import aiohttp

from assistant.fakes.requests import event_callback, signed_event_request

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


@dataclass(frozen=True)
class Arrival:
    at: float  # seconds after the start of the schedule
    payload: dict[str, Any]  # an event_callback, its event_id given where the events are made

    @classmethod
    def of(cls, at: float, event: dict[str, Any]) -> Arrival:
        """`event` wrapped as Slack delivers it, here: event ids stay unique across senders."""
        return cls(at, event_callback(event))


@dataclass(frozen=True)
class Timed:
    """One open-loop delivery: the status, the time from the event's scheduled arrival to the
    whole response (so a sender that falls behind counts against the figure, not for it),
    and how late the request left."""

    status: int
    seconds: float
    late: float


def poisson_times(rate: float, seconds: float, rng: random.Random) -> list[float]:
    """Arrival times of a Poisson process of `rate` per second over `seconds`."""
    times, now = [], rng.expovariate(rate)
    while now < seconds:
        times.append(now)
        now += rng.expovariate(rate)
    return times


def send_open_loop(url: str, arrivals: list[Arrival]) -> list[Timed]:
    """POST each event, signed, at its own time whatever the responses before it: the way
    Slack's traffic arrives (an open loop), unlike `send_events`'s fixed number in flight."""
    return asyncio.run(_open_loop(f"{url}/slack/events", arrivals))


async def _open_loop(endpoint: str, arrivals: list[Arrival]) -> list[Timed]:
    results: list[Timed | None] = [None] * len(arrivals)
    timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT)
    connector = aiohttp.TCPConnector(limit=0)  # no cap: each arrival gets a connection
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        loop = asyncio.get_running_loop()
        start = loop.time()

        async def deliver(position: int, arrival: Arrival) -> None:
            body, headers = signed_event_request(arrival.payload)
            due = start + arrival.at
            late = loop.time() - due
            async with session.post(endpoint, data=body, headers=headers) as response:
                await response.read()
            results[position] = Timed(response.status, loop.time() - due, late)

        tasks = []
        for position, arrival in enumerate(arrivals):
            wait = start + arrival.at - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)  # the schedule itself, not a wait for the app
            tasks.append(asyncio.create_task(deliver(position, arrival)))
        await asyncio.gather(*tasks)
    return [r for r in results if r is not None]
