"""A run's lease as its process may count on it, and how a stopping process ends its runs
(docs/architecture.md#scheduling-and-leases). `RunScheduler`
(assistant/run/scheduling/scheduler.py) uses both.

A stopping process (SIGTERM, SIGINT) starts no run more, lets the runs under way go on for a
short grace, then cancels them. A cancelled run records no last entry: what it answers stays
owed, and its lease is released, so the next process resumes it at once. It may take a little
more time to take back what it was streaming (best effort: a resumed run deletes whatever is
left), then it is cut short.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol

from context.storage import StopRequest, ThreadKey

log = logging.getLogger(__name__)

LEASE_MARGIN = 0.2  # of the lease's seconds: how long before its expiry a run stops
STOP_GRACE_SECONDS = 3.0  # how long a stopping process lets its runs go on
CLEANUP_SECONDS = 2.0  # then how long a cancelled run may clean up, twice at most


class LeaseLost(Exception):
    """This process may no longer hold the thread's lease: the run stops, the request stays
    owed."""


class RunStopped(LeaseLost):
    """A person pressed the stop button (docs/architecture.md#the-stop-button): the run stops
    at once, with no apology; the scheduler records the stop, which answers its requests."""

    def __init__(self, stop: StopRequest) -> None:
        super().__init__(f"stopped by {stop.user}")
        self.stop = stop


@dataclass
class Lease:
    """A thread's lease as this process may count on it: until `deadline` (monotonic)."""

    key: ThreadKey
    deadline: float
    stopping: bool = False  # its process is stopping: the run is cancelled, stays owed
    stop: StopRequest | None = None  # the stop button pressed: the run is cancelled
    # What the stopped run was streaming: (the message's ts, the text it shows).
    shown: list[tuple[str, str]] = field(default_factory=list)
    woken: asyncio.Event = field(default_factory=asyncio.Event)  # look for a stop now

    @classmethod
    def claimed(cls, key: ThreadKey, started: float, seconds: float) -> Lease:
        """The lease a claim that started at `started` (monotonic) and succeeded gives."""
        return cls(key, started + seconds * (1 - LEASE_MARGIN))

    def ensure(self) -> None:
        if self.stop is not None:
            raise RunStopped(self.stop)  # no post, append or step after the stop was seen
        if time.monotonic() >= self.deadline:
            raise LeaseLost(f"the lease of thread {self.key} may have expired")


current_lease: ContextVar[Lease | None] = ContextVar("run_lease", default=None)


def ensure_lease() -> None:
    """Raise LeaseLost if the run calling it may no longer hold its thread's lease (outside
    a run: a replay, an event, nothing to check)."""
    lease = current_lease.get()
    if lease is not None:
        lease.ensure()


def note_shown(parts: list[tuple[str, str]]) -> None:
    """What a run stopped by a person was streaming, (ts, text shown): kept for the stop's
    entry (`assistant.run.stopping.stop`)."""
    lease = current_lease.get()
    if lease is not None and lease.stop is not None:
        lease.shown.extend(parts)


def run_stopping() -> bool:
    """Whether the run calling it is cancelled because its process stops: it still holds
    its lease and may take back what it showed (not so a run whose lease may be lost)."""
    lease = current_lease.get()
    return lease is not None and lease.stopping


class Running(Protocol):
    """A thread's drain as `RunScheduler` keeps it."""

    task: asyncio.Task[None] | None
    lease: Lease | None


async def stop_runs(
    running: Iterable[Running], idle: asyncio.Event, grace: float, cleanup: float
) -> None:
    """Until `idle`, for `grace` seconds at most; then cancel what still runs, giving it
    `cleanup` seconds, then `cleanup` more once cut short again."""
    try:
        async with asyncio.timeout(grace):
            await idle.wait()
        return
    except TimeoutError:
        pass
    threads = list(running)
    log.warning("stopping %d run(s): what they answer stays owed", len(threads))
    for thread in threads:
        if thread.lease is not None:
            thread.lease.stopping = True
    tasks = {thread.task for thread in threads if thread.task is not None}
    for task in tasks:
        task.cancel()
    if not tasks:
        return
    _, late = await asyncio.wait(tasks, timeout=cleanup)
    for task in late:  # its clean-up hangs (a Slack call that does not answer): cut short
        task.cancel()
    if late:
        await asyncio.wait(late, timeout=cleanup)
