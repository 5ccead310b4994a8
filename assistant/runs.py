"""Runs: one per thread at a time, across processes, and none lost to a crash (SPEC §4).

What is owed lives in the store, not in memory: a user entry recorded with `wants_answer` is
owed a run until the thread's `answered_through` reaches it, and the entry that ends a run
(finishRequest, an error) raises `answered_through` in the same write. A process runs a
thread only while it holds the thread's lease in the store; the lease is renewed while the run
goes and expires if its holder dies.

So after a crash nothing is lost: any process finds the owed threads with free or expired
leases (`Store.waiting_threads`), at start and every half lease, and runs them. And nothing
is answered twice by two processes: a process that cannot take the lease leaves the work to
the holder, which looks for owed entries again after it lets the lease go.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from context.storage import Store, ThreadKey

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AnswerRequest:
    """A user entry that should be answered, and the Slack message it came from."""

    index: int
    message_ts: str
    bot_user_id: str | None = None


# A run answers requests; its last entry raises the thread's answered_through.
RunFunction = Callable[[ThreadKey, list[AnswerRequest]], Awaitable[None]]


class LeaseLost(Exception):
    """Another process took over the thread (this one stalled past its lease)."""


def holder_name() -> str:
    """This process, as lease holder: unique even when a restarted process reuses a pid."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@dataclass
class _Thread:
    nudged: bool = True
    task: asyncio.Task[None] | None = None


@dataclass
class RunScheduler:
    run: RunFunction
    store: Store
    lease_seconds: float = 30.0
    holder: str = field(default_factory=holder_name)

    def __post_init__(self) -> None:
        self._threads: dict[ThreadKey, _Thread] = {}
        self._bot_ids: dict[str, str] = {}  # team -> the bot's user id, for resumed runs
        self._idle = asyncio.Event()
        self._idle.set()
        self._sweeper: asyncio.Task[None] | None = None

    def request(self, key: ThreadKey, request: AnswerRequest | None = None) -> None:
        """Something in the thread may be owed an answer (it is already in the store)."""
        if request is not None and request.bot_user_id:
            self._bot_ids[key.team] = request.bot_user_id
        thread = self._threads.get(key)
        if thread is None:
            thread = self._threads[key] = _Thread()
            thread.task = asyncio.create_task(self._drain(key, thread))
            self._idle.clear()
        thread.nudged = True

    @property
    def active(self) -> int:
        return len(self._threads)

    async def wait_idle(self) -> None:
        """Until no thread has a run going or waiting in this process."""
        await self._idle.wait()

    def start(self) -> None:
        """Resume what crashed runs left (now), and keep watching for expired leases."""
        self._sweeper = asyncio.create_task(self._sweep())

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        await self.wait_idle()

    async def _sweep(self) -> None:
        while True:
            try:
                for key in await asyncio.to_thread(self.store.waiting_threads):
                    if key not in self._threads:
                        log.info("resuming thread %s", key)
                        self.request(key)
            except Exception:
                log.exception("looking for threads owed an answer failed")
            await asyncio.sleep(self.lease_seconds / 2)

    async def _drain(self, key: ThreadKey, thread: _Thread) -> None:
        try:
            while thread.nudged:
                thread.nudged = False
                if not await asyncio.to_thread(
                    self.store.claim, key, self.holder, self.lease_seconds
                ):
                    return  # another process runs it, and looks again when it is done
                try:
                    await self._run_owed(key)
                except LeaseLost:
                    log.warning("lost the lease of thread %s: another process runs it", key)
                    return
                finally:
                    # Still owed: recorded by another process while we held the lease (it
                    # left the thread to us) since we last looked.
                    if await asyncio.to_thread(self.store.release, key, self.holder):
                        thread.nudged = True
        except Exception:
            log.exception("runs in thread %s failed", key)
        finally:
            del self._threads[key]
            if not self._threads:
                self._idle.set()

    async def _run_owed(self, key: ThreadKey) -> None:
        """Run while entries are owed an answer."""
        while owed := await asyncio.to_thread(self.store.pending, key):
            bot = self._bot_ids.get(key.team)
            requests = [AnswerRequest(p.index, p.slack_ts or "", bot) for p in owed]
            try:
                # The run's last entry raises answered_through in the same write.
                await self._with_lease(key, self.run(key, requests))
            except LeaseLost:
                raise
            except Exception:
                # Cut short before its last entry: never loop on the same request.
                log.exception("run in thread %s failed", key)
                await asyncio.to_thread(self.store.mark_answered, key, owed[-1].index)

    async def _with_lease(self, key: ThreadKey, run: Awaitable[None]) -> None:
        """Run, renewing the lease meanwhile; a lease lost (this process stalled past its
        expiry, another took over) stops the run rather than let two answer."""
        task = asyncio.ensure_future(run)
        while True:
            done, _ = await asyncio.wait({task}, timeout=self.lease_seconds / 3)
            if done:
                return task.result()  # None, or the run's exception
            if not await asyncio.to_thread(self.store.claim, key, self.holder, self.lease_seconds):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                raise LeaseLost(key)
