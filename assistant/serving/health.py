"""Whether the store can be read and written, for `GET /healthz`.

A load balancer asks every few seconds, so the check is cheap and goes through the store's
own calls: a read of a thread that never exists, and a write transaction that deletes a row
that never exists. Both reach the database (the delete takes the write lock on SQLite and
fails on a read-only database or a PostgreSQL standby) and change nothing.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import Future, ThreadPoolExecutor

from context.storage import Store, ThreadKey

CHECK_TIMEOUT_S = 5.0
# No Slack team id, channel id or ts looks like this.
PROBE = ThreadKey("health-check", "health-check", "0")

log = logging.getLogger(__name__)


class StoreHealth:
    """One check at a time, in a thread of its own: a store that hangs makes every answer
    say so (after CHECK_TIMEOUT_S) without piling up threads or taking the runs' threads."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="health")
        self._running: Future[None] | None = None

    async def ok(self) -> bool:
        if self._running is None or self._running.done():
            self._running = self._thread.submit(self._probe)
        try:
            await asyncio.wait_for(asyncio.wrap_future(self._running), CHECK_TIMEOUT_S)
        except TimeoutError:
            log.warning("health check: the store did not answer within %g s", CHECK_TIMEOUT_S)
            return False
        except Exception as exc:
            # The error's class and first line only: never a statement or its parameters.
            reason = str(exc).splitlines()[0] if str(exc) else ""
            log.warning("health check: the store failed: %s: %s", type(exc).__name__, reason)
            return False
        return True

    def _probe(self) -> None:
        self._store.has_thread(PROBE)
        self._store.forget_message(PROBE, PROBE.thread_ts)

    def close(self) -> None:
        self._thread.shutdown(wait=False, cancel_futures=True)
