"""Reading a message's files and links before Slack gets its acknowledgement, in bounded time.

A message is acknowledged only once it is recorded, and what it links and attaches is written
into its entry, so images are checked, voice clips transcribed and linked messages read first.
Slack waits 3 seconds for the acknowledgement and then sends the event again; a slow or
rate-limited read must not hold it past that. So the reads run at once and have until
`READ_SECONDS` after the event arrived: what is not ready then is recorded without it (its
entry says so) and the work is cancelled.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Hashable, Sequence
from contextlib import asynccontextmanager
from typing import TypeVar

T = TypeVar("T")

# Slack's 3 s run from when it sends the event. The second kept back covers the request's way
# in and the answer's way out, the message's recording (one database write: milliseconds,
# more on a busy PostgreSQL) and the event loop's queue during a burst of events.
READ_SECONDS = 2.0


async def until(deadline: float, works: Sequence[Awaitable[T]], late: Sequence[T]) -> list[T]:
    """Run `works` at once; each one's result, or its `late` value when it was not done by
    `deadline` (the event loop's clock). Work not done is cancelled and waited for, so that
    nothing is left pending; an error other than that is raised once all of it has ended."""
    tasks = [asyncio.ensure_future(work) for work in works]
    try:
        if tasks:
            timeout = max(0.0, deadline - asyncio.get_running_loop().time())
            await asyncio.wait(tasks, timeout=timeout)
    finally:
        for task in tasks:
            task.cancel()  # nothing for those that are done
        await asyncio.gather(*tasks, return_exceptions=True)
    results: list[T] = []
    for task, fallback in zip(tasks, late, strict=True):
        if task.cancelled():
            results.append(fallback)
        elif (error := task.exception()) is not None:
            raise error
        else:
            results.append(task.result())
    return results


class InFlight:
    """The messages being read in this process. Slack sends an event again when it was not
    acknowledged in time, and the app_mention and message events of one mention come
    together: a second delivery waits for the first instead of reading everything again, and
    then finds the message recorded."""

    def __init__(self) -> None:
        self._reading: dict[Hashable, asyncio.Event] = {}

    @asynccontextmanager
    async def alone(self, slot: Hashable) -> AsyncIterator[None]:
        """Only one holder of `slot` at a time; the others wait their turn."""
        while (first := self._reading.get(slot)) is not None:
            await first.wait()
        done = self._reading[slot] = asyncio.Event()
        try:
            yield
        finally:
            del self._reading[slot]
            done.set()
