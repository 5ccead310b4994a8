"""One run per thread at a time (SPEC §4).

A request to answer names the user entry that wants an answer. While a thread's run is
going, new requests wait; when it ends, those whose entry its last prompt already held are
done (the model saw them), and any other starts the next run.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from context.storage import ThreadKey

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AnswerRequest:
    """A user entry that should be answered, and the Slack message it came from."""

    index: int
    message_ts: str
    bot_user_id: str | None = None


# A run answers requests and returns the highest log index its last prompt held.
RunFunction = Callable[[ThreadKey, list[AnswerRequest]], Awaitable[int]]


@dataclass
class _Thread:
    waiting: list[AnswerRequest] = field(default_factory=list)
    task: asyncio.Task[None] | None = None


class RunScheduler:
    def __init__(self, run: RunFunction) -> None:
        self._run = run
        self._threads: dict[ThreadKey, _Thread] = {}
        self._idle = asyncio.Event()
        self._idle.set()

    def request(self, key: ThreadKey, request: AnswerRequest) -> None:
        thread = self._threads.get(key)
        if thread is None:
            thread = self._threads[key] = _Thread()
            thread.task = asyncio.create_task(self._drain(key, thread))
            self._idle.clear()
        thread.waiting.append(request)

    @property
    def active(self) -> int:
        return len(self._threads)

    async def wait_idle(self) -> None:
        """Until no thread has a run going or waiting."""
        await self._idle.wait()

    async def _drain(self, key: ThreadKey, thread: _Thread) -> None:
        try:
            while thread.waiting:
                requests, thread.waiting = thread.waiting, []
                try:
                    seen_through = await self._run(key, requests)
                except Exception:
                    # The run has recorded what went wrong; keep the process serving.
                    log.exception("run in thread %s failed", key)
                    seen_through = max(r.index for r in requests)
                thread.waiting = [r for r in thread.waiting if r.index > seen_through]
        finally:
            del self._threads[key]
            if not self._threads:
                self._idle.set()
