"""The tick on a real store (SQLite file and PostgreSQL): a routine runs once per tick, across
restarts and across processes (two stores on two engines claiming at once), never while
paused, and once for all the ticks missed while nobody ticked. Time is the test's clock."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from assistant.routines.ticker import RoutineTicker
from context.storage import Routine, Store, open_store
from context.storage.schedule import as_moment, cron_schedule
from context.storage.tables import moment

START = datetime(2026, 11, 29, 8, 0, 0, tzinfo=UTC)


class Clock:
    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


@pytest.fixture
def opened() -> Iterator[list[Store]]:
    stores: list[Store] = []
    yield stores
    for store in stores:
        store.close()


def once_in_five_seconds(store: Store) -> Routine:
    at = START + timedelta(seconds=5)
    return store.add_routine("T1", "C1", "Say hello.", "U1", at=as_moment(at), next_due=moment(at))


def test_a_routine_a_few_seconds_ahead_runs_once_and_not_again_after_a_restart(store_url, opened):
    store = open_store(store_url)
    opened.append(store)
    routine = once_in_five_seconds(store)
    clock = Clock(START)
    ticker = RoutineTicker(store, clock)
    assert ticker.claim_due() == []
    clock.at = START + timedelta(seconds=6)
    assert [r.id for r in ticker.claim_due()] == [routine.id]
    assert ticker.claim_due() == []
    store.close()
    opened.remove(store)

    again = open_store(store_url)  # the process restarted
    opened.append(again)
    clock.at = START + timedelta(seconds=7)
    assert RoutineTicker(again, clock).claim_due() == []
    kept = again.routine(routine.id)
    assert kept is not None and kept.next_due is None and kept.last_outcome == "started"


def test_a_paused_routine_does_not_run_and_resumes_from_the_next_tick(store_url, opened):
    store = open_store(store_url)
    opened.append(store)
    schedule = cron_schedule("*/5 * * * *", "UTC")
    first = schedule.next_after(START)
    routine = store.add_routine("T1", "C1", "Status?", "U1", cron=schedule.cron, tz="UTC",
                                next_due=moment(first))  # fmt: skip
    assert store.pause_routine(routine.id, "by hand")
    clock = Clock(START + timedelta(hours=1))
    assert RoutineTicker(store, clock).claim_due() == []
    assert store.resume_routine(routine.id, moment(schedule.next_after(clock.at)))
    assert RoutineTicker(store, clock).claim_due() == []  # the missed ticks are not run
    clock.at += timedelta(minutes=5)
    assert len(RoutineTicker(store, clock).claim_due()) == 1


def test_after_downtime_the_missed_ticks_make_one_catch_up_run(store_url, opened):
    store = open_store(store_url)
    opened.append(store)
    schedule = cron_schedule("0 * * * *", "UTC")  # hourly
    routine = store.add_routine("T1", "C1", "Hourly.", "U1", cron=schedule.cron, tz="UTC",
                                next_due=moment(schedule.next_after(START)))  # fmt: skip
    clock = Clock(START + timedelta(hours=5, minutes=10))  # five ticks missed
    ticker = RoutineTicker(store, clock)
    assert len(ticker.claim_due()) == 1
    assert ticker.claim_due() == []
    kept = store.routine(routine.id)
    assert kept is not None and kept.next_due == moment(START + timedelta(hours=6))


def test_n_failures_in_a_row_pause_it_and_a_success_forgets_them(store_url, opened):
    store = open_store(store_url)
    opened.append(store)
    routine = once_in_five_seconds(store)
    assert not store.routine_ran(routine.id, "1.1", "failed", False, pause_after=3).paused
    assert store.routine_ran(routine.id, "1.2", "answered", True, pause_after=3).failures == 0
    for _ in range(2):
        assert not store.routine_ran(routine.id, None, "failed", False, pause_after=3).paused
    paused = store.routine_ran(routine.id, None, "failed", False, pause_after=3)
    assert paused.paused and paused.failures == 3 and "3 failed runs" in paused.paused_reason


def test_an_unreadable_schedule_pauses_the_routine_and_says_why(store_url, opened):
    store = open_store(store_url)
    opened.append(store)
    routine = store.add_routine("T1", "C1", "x", None, cron="not a cron", tz="UTC",
                                next_due=moment(START))  # fmt: skip
    assert RoutineTicker(store, Clock(START)).claim_due() == []
    kept = store.routine(routine.id)
    assert kept.paused and "cannot be read" in kept.paused_reason


def test_two_processes_on_postgresql_claim_each_tick_once(postgres_url, opened):
    stores = [open_store(postgres_url), open_store(postgres_url)]  # two engines, two pools
    opened.extend(stores)
    schedule = cron_schedule("* * * * *", "UTC")  # every minute
    added = [
        stores[0].add_routine(
            "T1", f"C{n}", "Tick.", "U1", cron=schedule.cron, tz="UTC", next_due=moment(START)
        )
        for n in range(20)
    ]
    ids = {routine.id for routine in added}
    won: list[list[int]] = [[], []]
    for minute in range(3):
        clock = Clock(START + timedelta(minutes=minute, seconds=1))
        barrier = threading.Barrier(2)

        def claim(which: int, clock: Clock = clock, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()  # both read the same due rows, then race to claim them
            won[which].extend(r.id for r in RoutineTicker(stores[which], clock).claim_due())

        threads = [threading.Thread(target=claim, args=(n,)) for n in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    claimed = won[0] + won[1]
    assert len(claimed) == 3 * len(ids)  # each routine once per minute, by one of the two
    assert {i: claimed.count(i) for i in ids} == dict.fromkeys(ids, 3)


async def test_the_loop_starts_what_it_claims_and_stops_at_once(tmp_path, opened):
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    opened.append(store)
    routine = once_in_five_seconds(store)
    started: list[int] = []
    stopping = asyncio.Event()

    async def start(claimed: Routine) -> None:
        started.append(claimed.id)
        stopping.set()  # the loop then stops without waiting out its hour

    ticker = RoutineTicker(store, Clock(START + timedelta(seconds=6)))
    await asyncio.wait_for(ticker.run(3600, stopping, start), timeout=30)
    assert started == [routine.id]
