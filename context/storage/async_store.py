"""The store from the event loop: its one async face (docs/architecture.md#storage).

The store is synchronous. `AsyncStore.write(store.x, *args)` runs `store.x(*args)` in its
executor's threads, so the event loop keeps serving meanwhile (on SQLite a write waits its
turn for the one writer: `WriteQueue`, and other processes' locks). `read` runs where a read
never waits (`Store.local_reads`: SQLite in WAL mode, whose readers take no lock a writer
holds) right where it is asked: handing it to a thread and back costs more CPU than the read
itself (bench/RESULTS.md, "Where an answered mention's app CPU goes"); on a database server a
read is a round trip that can hang, so it runs in the threads too.

Both take the sync method and its arguments and are typed by the method's own signature
(a `ParamSpec`): mypy checks the arguments and the result as if the method were called.

`async_store(store)`: the store's face on the event loop's default executor (bounded: at most
min(32, CPUs + 4) threads, shut down with the loop). Who needs threads of its own builds an
`AsyncStore` with them: the events' recorder (`assistant/app.py`), so an event's write never
waits behind the runs'.
"""

from __future__ import annotations

import asyncio
import contextvars
import weakref
from collections.abc import Callable
from concurrent.futures import Executor
from functools import partial
from typing import ParamSpec, TypeVar

from context.storage.base import Store

P = ParamSpec("P")
T = TypeVar("T")


class AsyncStore:
    """`store`'s calls from the event loop, in `executor`'s threads (None: the loop's
    default executor)."""

    def __init__(self, store: Store, executor: Executor | None = None) -> None:
        self.store = store
        self.executor = executor

    async def write(self, function: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """`function(*args, **kwargs)`, a call of the store that may wait: in the threads,
        with the caller's context variables (as `asyncio.to_thread`: telemetry's spans)."""
        loop = asyncio.get_running_loop()
        call = partial(contextvars.copy_context().run, function, *args, **kwargs)
        return await loop.run_in_executor(self.executor, call)

    async def read(self, function: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """`function(*args, **kwargs)`, a read of the store: here where its reads never wait,
        else in the threads."""
        if self.store.local_reads:
            return function(*args, **kwargs)
        return await self.write(function, *args, **kwargs)


_faces: weakref.WeakKeyDictionary[Store, AsyncStore] = weakref.WeakKeyDictionary()


def async_store(store: Store) -> AsyncStore:
    """The store's face on the event loop's default executor (one per store object)."""
    face = _faces.get(store)
    if face is None:
        face = _faces[store] = AsyncStore(store)
    return face
