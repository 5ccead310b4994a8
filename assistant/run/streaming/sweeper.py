"""Streams left owed, tried again (docs/architecture.md#streamed-answers): a thread whose
open streams could not be settled (an unfinished message Slack would not delete just now, a
start whose answer was lost and whose message could not be found) stays waiting in the store
(`Store.waiting_threads`). The scheduler, holding the thread's lease, calls `StreamSweeper`
after the thread's runs: it settles them again (`assistant.run.core.leftovers`), with a backoff
per thread that doubles from `FIRST_WAIT` to `LONGEST_WAIT`, and records in the log what it
deleted or what stays. A new process starts the backoff again."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from slack_sdk.web.async_client import AsyncWebClient

from assistant.run.core.leftovers import briefly, deleted_earlier, settle_streams, still_there
from assistant.run.core.recorder import Recorder
from assistant.run.core.run_context import RunContext
from assistant.slack.connection import SLACK_FAILURES
from context.log import ContextLog
from context.storage import Store, ThreadKey
from context.storage.async_store import async_store

log = logging.getLogger(__name__)

LONGEST_WAIT = 600.0  # seconds between two tries, at most


@dataclass
class StreamSweeper:
    """Settles a thread's open streams when its turn has come (see the module)."""

    store: Store
    client: AsyncWebClient
    recorder: Recorder
    first_wait: float = 15.0  # seconds before the first try after a run left one owed
    _next: dict[ThreadKey, tuple[float, float]] = field(default_factory=dict)  # (when, wait)
    _bot: str | None = None

    async def __call__(self, key: ThreadKey) -> None:
        """Called with the thread's lease held, after its runs; never raises (what could
        not be done stays recorded, for the next try)."""
        now = time.monotonic()
        wait = self.first_wait
        try:
            if key not in self._next:  # a run has just tried: the first retry waits
                if await async_store(self.store).read(self.store.open_streams, key):
                    self._next[key] = (now + wait, wait)
                return
            due, wait = self._next[key]
            if now < due:
                return
            mention = await self._mention()
            ctx = RunContext(key, self.client, None, mention, ContextLog([]), self.store)
            settled = await settle_streams(ctx)
            wait = min(wait * 2, LONGEST_WAIT)
            self._next[key] = (now + wait, wait)
            if not settled.owed:
                del self._next[key]
            deleted = settled.crashed + settled.earlier
            if deleted:
                await self.recorder.record(key, deleted_earlier(deleted))
            if settled.left and not settled.owed:  # refused for good: said once
                await self.recorder.record(key, still_there(settled.left))
        except Exception as exc:  # a Slack failure reading the thread, the store: tried later
            wait = min(wait * 2, LONGEST_WAIT)
            self._next[key] = (now + wait, wait)
            log.info("settling the streams of %s failed: %s", key, briefly(exc))

    async def _mention(self) -> str:
        """The bot as the log names it, for finding what lost starts made."""
        if self._bot is None:
            try:
                self._bot = (await self.client.auth_test()).get("user_id")
            except SLACK_FAILURES as exc:
                log.info("auth.test failed: %s", briefly(exc))
        return f"<@{self._bot or 'assistant'}>"
