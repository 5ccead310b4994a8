"""Items handed from one event loop to another: a streamed answer's events, from the model
client's loop (its own thread) to the run's.

Each hand-over wakes the receiving loop, and a model writing 50 tokens a second would wake it
50 times a second for text that goes to Slack 4 times a second at most. So the first items go
at once, later ones are gathered for up to `pause` seconds, and urgent ones (a call complete,
the answer's end) go at once with what was gathered: they stay in order, and what one send
held stays together.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Handoff(Generic[T]):
    """`send` and `close` on the sending loop; `receive` on `receiver`."""

    def __init__(self, receiver: asyncio.AbstractEventLoop, pause: float) -> None:
        self._receiver = receiver
        self._pause = pause
        self._queue: asyncio.Queue[list[T] | BaseException | None] = asyncio.Queue()
        self._gathered: list[T] = []
        self._sent = False
        self._flush_due: asyncio.TimerHandle | None = None

    def send(self, items: list[T], urgent: bool = False) -> None:
        self._gathered += items
        if urgent or not self._sent:
            self._flush()
        elif self._flush_due is None:
            self._flush_due = asyncio.get_running_loop().call_later(self._pause, self._flush)

    def close(self, error: BaseException | None = None) -> None:
        """No more items; `receive` raises `error` after the last, if given."""
        self._flush()
        self._put(error)

    async def receive(self) -> AsyncIterator[T]:
        while isinstance(items := await self._queue.get(), list):
            for item in items:
                yield item
        if items is not None:
            raise items

    def _flush(self) -> None:
        if self._flush_due is not None:
            self._flush_due.cancel()
            self._flush_due = None
        if self._gathered:
            self._put(self._gathered)
            self._gathered, self._sent = [], True

    def _put(self, item: list[T] | BaseException | None) -> None:
        with contextlib.suppress(RuntimeError):  # the receiving loop is gone
            self._receiver.call_soon_threadsafe(self._queue.put_nowait, item)
