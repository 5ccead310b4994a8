"""Scheduling (assistant/run/scheduling/scheduler.py) on a real store (SQLite and PostgreSQL):
what is owed is run once, under the thread's lease; a thread another process holds is left to
it; a run that fails leaves its request owed; a message that came during a run gets a run of its
own, under the same lease; a process that may not answer a workspace leaves its threads owed.
The run is the test's: what the scheduler hands it and when is what is tested."""

from __future__ import annotations

import asyncio
import logging

import pytest

from assistant.run.core.requests import AnswerRequest
from assistant.run.scheduling.scheduler import RunScheduler
from context.entry import UserContent
from context.storage import EntryMeta, Opening, Store, ThreadKey, ThreadMessage

KEY = ThreadKey("T1", "C1", "1712233980.000100")
TS = "2025-04-04T12:33:00Z"
TIMEOUT = 60  # a wait on a condition, generous for a busy machine


def owe(store: Store, key: ThreadKey, n: int) -> None:
    """A person's message `n` in the thread, owed an answer."""
    slack_ts = f"1712233{n:03d}.000100"
    store.record_message(
        key,
        UserContent(userid="<@U1>", text=f"question {n}"),
        TS,
        EntryMeta(slack_ts=slack_ts, wants_answer=True),
        Opening(lambda: "persona", TS),
        ThreadMessage(slack_ts, "<@U1>", f"question {n}"),
    )


class Answers:
    """A run that answers what it is handed with one entry raising answered_through (as
    Agent.run's last entry does), noting each call."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.calls: list[tuple[ThreadKey, list[int]]] = []
        self.during: list[ThreadKey] = []  # threads whose next run gets a message meanwhile

    async def __call__(self, key: ThreadKey, requests: list[AnswerRequest]) -> None:
        self.calls.append((key, [r.index for r in requests]))
        if key in self.during:
            self.during.remove(key)
            owe(self.store, key, 99)  # recorded by the listener while the run goes
        last = max(r.index for r in requests)
        await asyncio.to_thread(self.store.append, key, "Done.", TS, None, None, last)


async def idle(scheduler: RunScheduler) -> None:
    await asyncio.wait_for(scheduler.wait_idle(), TIMEOUT)


async def test_what_is_owed_is_run_once_and_the_lease_let_go(store: Store) -> None:
    owe(store, KEY, 1)
    owe(store, KEY, 2)
    run = Answers(store)
    scheduler = RunScheduler(run, store, holder="this")
    scheduler.request(KEY)
    scheduler.request(KEY)  # nudged again before it started: still one run
    await idle(scheduler)
    assert run.calls == [(KEY, [1, 2])]
    assert store.pending(KEY) == []
    assert store.claim(KEY, "another", 30)  # released: free for any process


async def test_a_thread_another_process_holds_is_left_to_it(store: Store) -> None:
    owe(store, KEY, 1)
    assert store.claim(KEY, "another", 30)
    run = Answers(store)
    scheduler = RunScheduler(run, store, holder="this")
    scheduler.request(KEY)
    await idle(scheduler)
    assert run.calls == []
    assert [p.index for p in store.pending(KEY)] == [1]  # owed, to the holder


async def test_a_failed_run_leaves_its_request_owed_and_says_why(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    owe(store, KEY, 1)

    async def broken(key: ThreadKey, requests: list[AnswerRequest]) -> None:
        raise RuntimeError("the disk is on fire")

    scheduler = RunScheduler(broken, store, holder="this")
    with caplog.at_level(logging.WARNING):
        scheduler.request(KEY)
        await idle(scheduler)
    assert [p.index for p in store.pending(KEY)] == [1]
    assert "its request stays owed" in caplog.text and "the disk is on fire" in caplog.text
    assert store.claim(KEY, "another", 30)  # released, for a later sweep to resume


async def test_a_message_that_came_during_a_run_gets_a_run_of_its_own(store: Store) -> None:
    owe(store, KEY, 1)
    run = Answers(store)
    run.during.append(KEY)
    scheduler = RunScheduler(run, store, holder="this")
    scheduler.request(KEY)
    await idle(scheduler)
    [later] = [  # the message recorded during the first run
        e.index for e in store.entries(KEY) if e.role == "user" and "99" in e.content.text
    ]
    assert run.calls == [(KEY, [1]), (KEY, [later])]
    assert store.pending(KEY) == []


async def test_runs_owed_meanwhile_go_on_under_the_lease_and_are_tidied_once_after(
    store: Store,
) -> None:
    """A message recorded during a run by another process's listener (it nudges no one here:
    it leaves the thread to the lease's holder) is run by the holder straight after, the
    lease kept: the thread is tidied (its streams left open) once, after its last run, never
    let go and taken again in between."""
    owe(store, KEY, 1)
    run = Answers(store)
    run.during.append(KEY)
    tidied: list[int] = []  # how many runs had been made at each tidy-up

    async def tidy(key: ThreadKey) -> None:
        tidied.append(len(run.calls))

    scheduler = RunScheduler(run, store, holder="this", tidy=tidy)
    scheduler.request(KEY)
    await idle(scheduler)
    assert len(run.calls) == 2 and store.pending(KEY) == []
    assert tidied == [2]


async def test_threads_of_a_workspace_it_may_not_answer_stay_owed(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    other = ThreadKey("T2", "C2", "1712233980.000100")
    owe(store, KEY, 1)
    owe(store, other, 1)
    run = Answers(store)
    scheduler = RunScheduler(run, store, holder="this", answers_team=lambda team: team == "T1")
    with caplog.at_level(logging.WARNING):
        scheduler.request(other)
        scheduler.request(other)
        scheduler.request(KEY)
        await idle(scheduler)
    assert run.calls == [(KEY, [1])]
    assert [p.index for p in store.pending(other)] == [1]
    assert caplog.text.count("threads of workspace T2 are owed answers") == 1  # said once


async def test_a_stopping_process_starts_no_run(store: Store) -> None:
    owe(store, KEY, 1)
    run = Answers(store)
    scheduler = RunScheduler(run, store, holder="this")
    await scheduler.stop()
    scheduler.request(KEY)
    await idle(scheduler)
    assert run.calls == []
    assert [p.index for p in store.pending(KEY)] == [1]  # the next process's sweep runs it


async def test_once_started_idle_waits_for_what_a_crash_left_owed(store: Store) -> None:
    """A thread owed from before the start (a crash) is waiting too: idle means its run has
    been made, not merely that the first sweep has not found it yet."""
    owe(store, KEY, 1)
    run = Answers(store)
    scheduler = RunScheduler(run, store, holder="this")
    scheduler.start()
    try:
        await idle(scheduler)
        assert run.calls == [(KEY, [1])]
        assert store.pending(KEY) == []
    finally:
        await scheduler.stop()
