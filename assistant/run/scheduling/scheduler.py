"""Runs: one per thread at a time, across processes, and none lost to a crash
(docs/architecture.md#runs).

What is owed lives in the store, not in memory: a user entry recorded with `wants_answer` is
owed a run until the thread's `answered_through` reaches it, and the entry that ends a run
(finishRequest, an error) raises `answered_through` in the same write. A process runs a
thread only while it holds the thread's lease in the store; the lease is renewed while the run
goes and expires if its holder dies.

So after a crash nothing is lost: any process finds the owed threads with free or expired
leases (`Store.waiting_threads`), at start and every half lease, and runs them. And nothing
is answered twice by two processes: a process that cannot take the lease leaves the work to
the holder, which looks for owed entries again after it lets the lease go.

The lease, when the database blips. A run counts on its lease only until a local deadline:
the start of its last successful claim + the lease's seconds - a fifth of them (monotonic
clock; the margin covers the claim's own time and small clock differences). The lease is
renewed every third of it; a renewal that says another process holds the thread, raises (the
database is unreachable: "not sure I hold it") or has not answered by the deadline stops the
run at once (it is cancelled, and this process starts no other run of the thread until it has
ended). And whatever a run is doing, it checks the deadline (`ensure_lease`) before each
Slack post and before recording its last entry: a run past it (its process stalled) stops
there instead. Another process takes the thread only once the lease has expired, after that
deadline: a thread never has two runs, and never two answers.

A run never ends silently. A run stopped that way, or by a store error that may pass
(`store_unavailable`: a connection cut, a server restarting or read-only, SQLite busy), leaves
its request owed: one line in the log; this process's sweeper (or another, once the lease has
expired) resumes it; its posts carry metadata, so the resumed run does not post them again.
Any other failure is ended by the run itself with an apology in the thread and an `Error:`
entry (`Agent.run`); one that still reaches the scheduler (that entry could not be recorded)
leaves the request owed too, with its traceback in the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from assistant.run.core.deferral import Retries, RunDeferred
from assistant.run.core.lease import (
    CLEANUP_SECONDS,
    STOP_GRACE_SECONDS,
    Lease,
    LeaseLost,
    RunStopped,
    current_lease,
    stop_runs,
)
from assistant.run.core.requests import AnswerRequest
from assistant.run.core.store_errors import briefly, log_failure
from assistant.run.stopping.watch import wait_for_run
from context.storage import StopRequest, Store, ThreadKey
from context.storage.async_store import async_store

log = logging.getLogger(__name__)


# A run answers requests; its last entry raises the thread's answered_through.
RunFunction = Callable[[ThreadKey, list[AnswerRequest]], Awaitable[None]]
# Records a stop: its entry raises answered_through; given what the run was streaming.
StopFunction = Callable[[ThreadKey, StopRequest, list[tuple[str, str]]], Awaitable[None]]


def holder_name() -> str:
    """This process, as lease holder: unique even when a restarted process reuses a pid."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@dataclass
class _Thread:
    nudged: bool = True
    task: asyncio.Task[None] | None = None
    lease: Lease | None = None  # while a run goes


@dataclass
class RunScheduler:
    run: RunFunction
    store: Store
    lease_seconds: float = 30.0
    holder: str = field(default_factory=holder_name)
    tidy: Callable[[ThreadKey], Awaitable[None]] | None = None  # after the runs, leased
    # Records a stop (the stop button) and what it stopped; None: stops are not looked for.
    stopped: StopFunction | None = None
    # Whether this process answers threads of a team (with one SLACK_BOT_TOKEN, only those of
    # its own workspace: another's are left owed, to the process that has its token).
    answers_team: Callable[[str], bool] | None = None

    def __post_init__(self) -> None:
        self._threads: dict[ThreadKey, _Thread] = {}
        self._bot_ids: dict[str, str] = {}  # team -> the bot's user id, for resumed runs
        self._idle = asyncio.Event()
        self._idle.set()
        self._sweeper: asyncio.Task[None] | None = None
        self._swept = asyncio.Event()  # the first look for threads owed an answer is done
        self._sweep_now = asyncio.Event()
        self._stopping = False
        self._retries = Retries()  # deferred runs (RunDeferred), when due
        self._elsewhere: set[str] = set()  # teams whose threads this process leaves alone
        self._routines: dict[ThreadKey, int] = {}  # the routine that asked, until its run

    def request(self, key: ThreadKey, request: AnswerRequest | None = None) -> None:
        """Something in the thread may be owed an answer (it is already in the store)."""
        if request is not None and request.bot_user_id:
            self._bot_ids[key.team] = request.bot_user_id
        if request is not None and request.routine is not None:
            # The store's owed entries do not say which routine asked: kept for its run's span.
            self._routines[key] = request.routine
        if self._stopping:
            return  # it stays owed: the next process's first sweep runs it
        if self.answers_team is not None and not self.answers_team(key.team):
            if key.team not in self._elsewhere:  # said once per team, not at every sweep
                self._elsewhere.add(key.team)
                log.warning(
                    "threads of workspace %s are owed answers that this process's bot token "
                    "cannot give: left to a process with that workspace's token",
                    key.team,
                )
            return
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
        """Until no thread has a run going or waiting in this process. Once started, a thread
        a crash left owed is waiting too, before the first sweep has found it."""
        if self._sweeper is not None:
            await self._swept.wait()
        await self._idle.wait()

    def start(self) -> None:
        """Resume what crashed runs left (now), and keep watching for expired leases."""
        self._sweeper = asyncio.create_task(self._sweep())

    def sweep_now(self) -> None:
        """Look for waiting threads now rather than at the next half lease (a wake-up
        listener that starts listening: what was sent before is lost)."""
        self._sweep_now.set()

    async def stop(
        self, grace: float = STOP_GRACE_SECONDS, cleanup: float = CLEANUP_SECONDS
    ) -> None:
        """Start no run more; end the runs under way (`run_lease.stop_runs`): within
        grace + 2 x cleanup seconds."""
        self._stopping = True
        self._retries.cancel()
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        await stop_runs(list(self._threads.values()), self._idle, grace, cleanup)

    async def _sweep(self) -> None:
        while True:
            try:
                for key in await async_store(self.store).read(self.store.waiting_threads):
                    if key not in self._threads:
                        log.info("resuming thread %s", key)
                        self.request(key)
            except Exception as exc:
                log_failure(exc, "looking for threads owed an answer failed")
            self._swept.set()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._sweep_now.wait(), self.lease_seconds / 2)
            self._sweep_now.clear()

    async def _drain(self, key: ThreadKey, thread: _Thread) -> None:
        try:
            while thread.nudged and not self._stopping:
                thread.nudged = False
                lease = thread.lease = await self._claim(key)
                if lease is None:
                    return  # another process runs it, and looks again when it is done
                try:
                    finished = await self._run_owed(key, lease)
                    if finished and self.tidy is not None:  # streams left owed
                        await self._with_lease(lease, self.tidy(key))
                finally:
                    # Still owed: recorded by another process while we held the lease (it
                    # left the thread to us) since we last looked.
                    owed = await async_store(self.store).write(self.store.release, key, self.holder)
                if not finished:
                    return  # a stopped run: resumed by a later sweep, never in a tight loop
                thread.nudged = thread.nudged or owed
        except Exception as exc:
            log_failure(exc, f"runs in thread {key} failed")
        finally:
            del self._threads[key]
            if not self._threads:
                self._idle.set()

    async def _claim(self, key: ThreadKey) -> Lease | None:
        started = time.monotonic()
        if not await async_store(self.store).write(
            self.store.claim, key, self.holder, self.lease_seconds
        ):
            return None
        return Lease.claimed(key, started, self.lease_seconds)

    async def _run_owed(self, key: ThreadKey, lease: Lease) -> bool:
        """Run while entries are owed an answer; False when a run stopped before its last
        entry (what it answers stays owed)."""
        while not self._stopping and (
            owed := await async_store(self.store).read(self.store.pending, key)
        ):
            bot = self._bot_ids.get(key.team)
            routine = self._routines.pop(key, None)
            requests = [
                AnswerRequest(
                    p.index,
                    p.slack_ts or "",
                    bot,
                    p.trace_context,
                    addressed=p.addressed,
                    routine=routine,
                )
                for p in owed
            ]
            try:
                stop = None
                if self.stopped is not None:  # pressed before the run started: none starts
                    stop = await async_store(self.store).read(self.store.stop_requested, key)
                if stop is None:
                    # The run's last entry raises answered_through in the same write.
                    await self._with_lease(lease, self.run(key, requests), watch=True)
            except RunStopped as exc:
                stop = exc.stop
            except (LeaseLost, RunDeferred) as exc:
                log.warning("stopped the run in thread %s (%s); its request stays owed", key, exc)
                if isinstance(exc, RunDeferred):
                    self._retries.call(exc.retry_in, self.request, key)
                return False
            except Exception as exc:
                log_failure(exc, f"the run in thread {key} stopped; its request stays owed")
                return False
            if stop is not None and not await self._record_stop(key, lease, stop):
                return False
        return True

    async def _record_stop(self, key: ThreadKey, lease: Lease, stop: StopRequest) -> bool:
        """The stop's entry, which answers what it stopped (`stopped`); False if it failed
        (the stop stays pending, and its requests owed)."""
        assert self.stopped is not None
        shown, lease.stop, lease.shown = lease.shown, None, []
        log.info("the stop button stopped the run in thread %s", key)
        try:
            await self._with_lease(lease, self.stopped(key, stop, shown))
        except Exception as exc:
            log_failure(exc, f"recording the stop in thread {key} failed; it stays owed")
            return False
        return True

    def stop_now(self, key: ThreadKey) -> None:
        """A stop of the thread is in the store: a run of it here looks at once; else the
        thread is nudged, so that a run owed but not under way records the stop."""
        thread = self._threads.get(key)
        if thread is not None and thread.lease is not None:
            thread.lease.woken.set()
        else:
            self.request(key)

    async def _with_lease(self, lease: Lease, run: Awaitable[None], watch: bool = False) -> None:
        """Run, renewing the lease meanwhile; a lease lost, or not sure to be held, stops
        the run (LeaseLost) rather than let two answer. `watch`: a stop pressed stops it too
        (RunStopped)."""
        token = current_lease.set(lease)  # the run's task sees it (ensure_lease)
        task = asyncio.ensure_future(run)
        current_lease.reset(token)
        stops = self.store if watch and self.stopped is not None else None
        try:
            while True:
                wait = min(self.lease_seconds / 3, lease.deadline - time.monotonic())
                if await wait_for_run(task, lease, stops, max(wait, 0.0)):
                    return task.result()  # None, or the run's exception
                if lease.stop is not None:
                    raise RunStopped(lease.stop)  # the run is cancelled below, at once
                await self._renew(lease)
        finally:
            if not task.done():
                # Never left running: this process starts no other run of the thread
                # until this one has ended.
                task.cancel()
                try:
                    await asyncio.wait({task})
                except asyncio.CancelledError:
                    task.cancel()  # a stopping process cuts its clean-up short too
                    raise
                if not task.cancelled() and task.exception() is not None:
                    log.info("the stopped run in thread %s ended with an error", lease.key)

    async def _renew(self, lease: Lease) -> None:
        """Extend the lease, or raise LeaseLost: another process has it, or the claim raised
        or had not answered by the deadline (this process cannot be sure it still holds it)."""
        started = time.monotonic()
        try:
            async with asyncio.timeout(lease.deadline - started):
                held = await async_store(self.store).write(
                    self.store.claim, lease.key, self.holder, self.lease_seconds
                )
        except TimeoutError:
            raise LeaseLost("renewing the lease took until its deadline") from None
        except Exception as exc:
            raise LeaseLost(f"renewing the lease failed: {briefly(exc)}") from exc
        if not held:
            raise LeaseLost("another process took the thread over")
        lease.deadline = Lease.claimed(lease.key, started, self.lease_seconds).deadline
