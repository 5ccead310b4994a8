"""The store's promise across processes (docs/architecture.md#storage): two processes append to
one thread, on every backend (the rest: tests/context/test_store.py)."""

from __future__ import annotations

import multiprocessing
from multiprocessing.connection import wait

from context.log import ContextLog
from context.storage import (
    EntryMeta,
    open_store,
)
from context.toolcalls import PostMessage
from tests.context.test_store import KEY, TS, user

PER_PROCESS = 200


def _append_from_process(url: str, worker: str, barrier) -> None:
    """Open a fresh database and append to one thread, both at the same time as the other."""
    barrier.wait(timeout=60)
    store = open_store(url)
    try:
        barrier.wait(timeout=60)
        for n in range(PER_PROCESS):
            meta = EntryMeta(slack_ts=f"{n}.{worker}", event_id=f"{worker}-{n}")
            content = [f"{worker} {n}", user(f"{worker} {n}"), PostMessage(text=f"{worker} {n}")]
            store.append(KEY, content[n % 3], TS, meta)
    finally:
        store.close()


def _run_together(processes: list, barrier) -> None:
    for process in processes:
        process.start()
    running = {process.sentinel: process for process in processes}
    while running:
        ended = wait(list(running), timeout=120)
        if not ended:
            break
        for sentinel in ended:
            process = running.pop(sentinel)
            process.join()  # the sentinel is ready a moment before the exit code is
            if process.exitcode != 0:
                barrier.abort()  # so that the others stop waiting for it
    for process in running.values():
        process.kill()
        process.join()


def test_two_processes_append_to_one_thread(store_url: str):
    spawn = multiprocessing.get_context("spawn")
    barrier = spawn.Barrier(2)
    workers = [
        spawn.Process(target=_append_from_process, args=(store_url, worker, barrier))
        for worker in ("A", "B")
    ]
    _run_together(workers, barrier)
    assert [p.exitcode for p in workers] == [0, 0]

    store = open_store(store_url)
    try:
        loaded = store.entries(KEY)
        event_ids = [m.event_id for m in store.metadata(KEY)]
    finally:
        store.close()
    assert [e.index for e in loaded] == list(range(2 * PER_PROCESS))
    ContextLog(loaded)
    expected = {f"{w}-{n}" for w in "AB" for n in range(PER_PROCESS)}
    assert len(event_ids) == len(expected) and set(event_ids) == expected
