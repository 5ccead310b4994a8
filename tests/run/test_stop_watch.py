"""How a running run learns of a stop (assistant/run/stopping/watch.py): the scheduler waits on
the run and reads the store for a stop when woken, on a real store (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import time

from assistant.run.core.lease import Lease
from assistant.run.stopping.watch import wait_for_run
from context.entry import UserContent
from context.storage import EntryMeta, Opening, StopRequest, Store, ThreadKey, ThreadMessage

KEY = ThreadKey("T1", "C1", "1712233980.000100")
TS = "2025-04-04T12:33:00Z"


def owed(store: Store) -> None:
    store.record_message(
        KEY,
        UserContent(userid="<@U1>", text="hello"),
        TS,
        EntryMeta(slack_ts="1712233981.000100", wants_answer=True),
        Opening(lambda: "persona", TS),
        ThreadMessage("1712233981.000100", "<@U1>", "hello"),
    )


def watched(store: Store | None, seconds: float, *, done: bool, wake: bool) -> tuple[bool, Lease]:
    """`wait_for_run` on a run that is `done` or never ends; `wake`: this process took a stop
    event (the lease is woken before the wait)."""

    async def watch() -> tuple[bool, Lease]:
        lease = Lease(KEY, time.monotonic() + 3600)
        run: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if done:
            run.set_result(None)
        if wake:
            lease.woken.set()
        try:
            return await wait_for_run(run, lease, store, seconds), lease
        finally:
            run.cancel()

    return asyncio.run(watch())


def test_a_finished_run_is_done_with_or_without_a_store(store: Store) -> None:
    assert watched(None, 60, done=True, wake=False)[0]
    finished, lease = watched(store, 60, done=True, wake=False)
    assert finished and lease.stop is None


def test_a_run_still_going_at_the_end_of_the_wait_is_not_done(store: Store) -> None:
    assert not watched(None, 0, done=False, wake=False)[0]
    going, lease = watched(store, 0, done=False, wake=False)
    assert not going and lease.stop is None


def test_a_stop_in_the_store_ends_the_wait_when_woken(store: Store) -> None:
    owed(store)
    stop = store.request_stop(KEY, "U2", "1712233983.000100", ())
    assert isinstance(stop, StopRequest)
    finished, lease = watched(store, 3600, done=False, wake=True)  # at once, not in an hour
    assert not finished and lease.stop == stop
    assert not lease.woken.is_set()  # looked: the next wake is another event's


def test_woken_with_no_stop_the_wait_goes_on_to_its_end(store: Store) -> None:
    owed(store)
    finished, lease = watched(store, 0, done=False, wake=True)
    assert not finished and lease.stop is None and not lease.woken.is_set()
