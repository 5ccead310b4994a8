"""How async code reads the store (context/storage/async_store.py): on its event loop where
reads never wait (SQLite in WAL mode), in a thread where a read is a round trip (PostgreSQL);
writes always in a thread."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor

from context.storage import Store, ThreadKey
from context.storage.async_store import AsyncStore, async_store

KEY = ThreadKey("T1", "C1", "1712233980.000100")


def _thread_of_a_read(store: Store) -> tuple[int, int, list]:
    """(the event loop's thread, the thread the read ran in, what it read)."""

    async def main() -> tuple[int, int, list]:
        ran_in: list[int] = []

        def pending(key: ThreadKey) -> list:
            ran_in.append(threading.get_ident())
            return store.pending(key)

        found = await async_store(store).read(pending, KEY)
        return threading.get_ident(), ran_in[0], found

    return asyncio.run(main())


def test_a_read_runs_where_it_is_asked_only_where_reads_never_wait(store: Store, store_url):
    loop_thread, read_thread, found = _thread_of_a_read(store)
    assert found == []
    if store_url.startswith("sqlite"):
        assert store.local_reads
        assert read_thread == loop_thread  # no hand-off to a thread and back
    else:
        assert not store.local_reads
        assert read_thread != loop_thread  # a round trip that can hang: off the event loop


def test_a_write_runs_in_the_threads_with_the_caller_s_context(store: Store):
    """Writes never run on the event loop; the caller's context variables go with them (as
    `asyncio.to_thread` took them: telemetry's spans), and a face with threads of its own
    (the events' recorder's) runs them there."""
    asked = contextvars.ContextVar("asked", default="nobody")

    async def main() -> tuple[int, list[tuple[int, str, str]]]:
        ran: list[tuple[int, str, str]] = []

        def claim(key: ThreadKey, holder: str, seconds: float) -> bool:
            name = threading.current_thread().name
            ran.append((threading.get_ident(), name, asked.get()))
            return store.claim(key, holder, seconds)

        asked.set("the run")
        await async_store(store).write(claim, KEY, "holder-1", 30.0)
        with ThreadPoolExecutor(1, thread_name_prefix="own") as own:
            await AsyncStore(store, own).write(claim, KEY, "holder-1", 30.0)
        return threading.get_ident(), ran

    loop_thread, ran = asyncio.run(main())
    assert [(ident != loop_thread, value) for ident, _, value in ran] == [
        (True, "the run"),
        (True, "the run"),
    ]
    assert ran[1][1].startswith("own")
