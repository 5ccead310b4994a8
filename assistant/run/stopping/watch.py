"""How a running run learns that a person pressed its session's stop button
(docs/architecture.md#the-stop-button), wherever Slack's event arrived: the stop is in the
store (`StopStore`), and the scheduler, while it waits on the run, looks for it every
`STOP_CHECK_SECONDS` and at once when this process took the event (`Lease.woken`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from assistant.run.core.lease import Lease
from assistant.run.core.store_errors import briefly
from context.storage import Store
from context.storage.async_store import async_store

log = logging.getLogger(__name__)

STOP_CHECK_SECONDS = 1.0  # how often a run's scheduler reads the store for a stop


async def wait_for_run(
    task: asyncio.Future[None], lease: Lease, store: Store | None, seconds: float
) -> bool:
    """Wait for the run's `task` up to `seconds`: True once it is done. With a `store`, look
    for a stop meanwhile: one found is set on the lease (`lease.stop`), and the wait ends."""
    end = time.monotonic() + seconds
    while True:
        left = end - time.monotonic()
        if store is None:
            done, _ = await asyncio.wait({task}, timeout=max(left, 0.0))
            return bool(done)
        # Any: waited on in one set with `task`, a Future[None].
        woken: asyncio.Future[Any] = asyncio.ensure_future(lease.woken.wait())
        try:
            done, _ = await asyncio.wait(
                {task, woken},
                timeout=max(min(left, STOP_CHECK_SECONDS), 0.0),
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            woken.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await woken
        if task in done:
            return True
        if woken not in done and time.monotonic() >= end:
            return False  # the lease's renewal is due first: the next check follows it
        lease.woken.clear()
        try:
            lease.stop = await async_store(store).read(store.stop_requested, lease.key)
        except Exception as exc:  # the renewal tells whether the lease still holds
            log.info("looking for a stop in %s failed: %s", lease.key, briefly(exc))
        if lease.stop is not None:
            return False
