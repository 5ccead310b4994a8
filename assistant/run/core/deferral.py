"""Deferred runs (docs/architecture.md#slack-outages): a run stopped by a fault that may pass
keeps its request owed and is tried again later, in this process by a timer and in any other
by its sweep once the store's `retry_at` has come. A run whose tool call waits for a person's
approval is deferred the same way, to the approval's expiry; a click makes it due at once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from context.storage import ThreadKey

# How the log says why a run found what an earlier run left unfinished (tools/post_message.py).
RESTARTED = "The process restarted during this run"
SLACK_BACK = "Slack answered again after failing during this run"


class RunDeferred(Exception):
    """The run stopped on a fault that may pass (Slack unavailable:
    assistant/run/core/slack_outage.py):
    its request stays owed, tried again `retry_in` seconds later."""

    def __init__(self, reason: str, retry_in: float) -> None:
        super().__init__(reason)
        self.retry_in = retry_in


class Retries:
    """When this process tries each deferred thread again: one timer per thread, the latest."""

    def __init__(self) -> None:
        self._timers: dict[ThreadKey, asyncio.TimerHandle] = {}

    def call(self, delay: float, callback: Callable[[ThreadKey], object], key: ThreadKey) -> None:
        if (old := self._timers.pop(key, None)) is not None:
            old.cancel()
        self._timers[key] = asyncio.get_running_loop().call_later(delay, self._due, callback, key)

    def _due(self, callback: Callable[[ThreadKey], object], key: ThreadKey) -> None:
        del self._timers[key]
        callback(key)

    def cancel(self) -> None:
        """At stop: the store keeps when each is due, for the next process."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
