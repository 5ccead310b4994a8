"""Two `assistant serve` processes on one PostgreSQL database (issue: reliability): Slack
delivers every event twice, once to each process, and still every mention is recorded once
and answered once, and every log stays contiguous."""

from __future__ import annotations

import asyncio
import time

import aiohttp

from assistant.fakes import FakeOpenAI, FakeSlack
from assistant.fakes.event_requests import event_callback, signed_event_request
from bench import conversation
from bench.model import AnsweringModel
from bench.server import AppServer
from context.storage import open_store

THREADS, PER_THREAD = 50, 10
IN_FLIGHT = 16  # events whose two deliveries are under way at once
TIMEOUT = 240.0


async def deliver_twice(urls: list[str], events: list[dict]) -> list[int]:
    """Each event to every process at the same moment (its two deliveries race); statuses."""
    statuses: list[int] = []
    gate = asyncio.Semaphore(IN_FLIGHT)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session:

        async def post(url: str, payload: dict) -> None:
            body, headers = signed_event_request(payload)
            async with session.post(f"{url}/slack/events", data=body, headers=headers) as r:
                await r.read()
                statuses.append(r.status)

        async def both(number: int, event: dict) -> None:
            payload = event_callback(event)  # one event id, as Slack's deliveries share
            order = urls if number % 2 == 0 else urls[::-1]  # round robin: who gets it first
            async with gate:
                await asyncio.gather(*(post(url, payload) for url in order))

        await asyncio.gather(*(both(n, e) for n, e in enumerate(events)))
    return statuses


def nothing_owed(database_url: str) -> int:
    store = open_store(database_url)
    try:
        deadline = time.monotonic() + TIMEOUT
        while (owed := sum(len(store.pending(s.key)) for s in store.threads())) and (
            time.monotonic() < deadline
        ):
            time.sleep(0.2)  # another process's database: no event to wait on
        return owed
    finally:
        store.close()


def test_two_processes_on_postgresql_answer_each_mention_once(postgres_url, tmp_path):
    model = AnsweringModel()
    with FakeSlack() as slack, FakeOpenAI(default=model) as fake:
        made = conversation.mentions(slack, THREADS, PER_THREAD)
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        with (
            AppServer(slack, fake, tmp_path / "a", DATABASE_URL=postgres_url) as first,
            AppServer(slack, fake, tmp_path / "b", DATABASE_URL=postgres_url) as second,
        ):
            statuses = asyncio.run(deliver_twice([first.url, second.url], [m.event for m in made]))
            for mention in made:  # each wait returns at once when the answer is there
                slack.wait_for_call(
                    "chat.postMessage",
                    timeout=TIMEOUT,
                    where=lambda call, label=mention.label: label in call.params.get("text", ""),
                )
            assert nothing_owed(postgres_url) == 0
            # Both processes did part of the work.
            assert "👤" in first.process.stdout.text and "👤" in second.process.stdout.text

    assert statuses == [200] * (2 * len(made))
    assert conversation.recorded_once(postgres_url, made) == len(made)
    assert conversation.answered_once(slack, made) == len(made)
    assert conversation.valid_logs(postgres_url) == (THREADS, THREADS)
