"""How async code reads the store (context/storage/reads.py): on its event loop where reads
never wait (SQLite in WAL mode), in a thread where a read is a round trip (PostgreSQL)."""

from __future__ import annotations

import asyncio
import threading

from context.storage import Store, ThreadKey
from context.storage.reads import read

KEY = ThreadKey("T1", "C1", "1712233980.000100")


def _thread_of_a_read(store: Store) -> tuple[int, int, list]:
    """(the event loop's thread, the thread the read ran in, what it read)."""

    async def main() -> tuple[int, int, list]:
        ran_in: list[int] = []

        def pending(key: ThreadKey) -> list:
            ran_in.append(threading.get_ident())
            return store.pending(key)

        found = await read(store, pending, KEY)
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
