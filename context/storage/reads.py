"""Store reads from the event loop: the one way the app reads its store.

The store is synchronous. Where a read never waits (`Store.local_reads`: SQLite in WAL mode,
whose readers take no lock a writer holds) it runs right where it is asked: handing it to a
thread and back costs more CPU than the read itself (bench/RESULTS.md, "Where an answered
mention's app CPU goes"). On a database server a read is a round trip that can hang, so it
runs in a thread and the event loop keeps serving. Writes always run in a thread: on SQLite
they wait their turn for the one writer (`WriteQueue`, and other processes' locks).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor
from functools import partial
from typing import Any, TypeVar

from context.storage.base import Store

T = TypeVar("T")


async def read(
    store: Store, function: Callable[..., T], *args: Any, executor: Executor | None = None
) -> T:
    """`function(*args)`, a read of `store`: here where its reads never wait, else in
    `executor`'s threads (None: the event loop's default)."""
    if store.local_reads:
        return function(*args)
    return await asyncio.get_running_loop().run_in_executor(executor, partial(function, *args))
