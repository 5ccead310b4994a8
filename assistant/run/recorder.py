"""Recording entries: into the store, then onto the console trace
(docs/log-format.md#what-is-recorded, #console-trace).

Every entry of every thread goes through `Recorder.record` (or `record_message`,
`record_by`), so each one is printed exactly once, when it is recorded. The store is
synchronous; its calls run in worker threads so the event loop keeps serving other threads
meanwhile.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from functools import partial
from typing import Any, TypeVar

from assistant.run.lease import ensure_lease
from context.entry import Content, Entry, UserContent, now_timestamp
from context.storage import EntryMeta, ImageRef, Store, ThreadKey, ThreadMessage
from context.trace import Trace

T = TypeVar("T")


class Recorder:
    """`executor`: the threads its store calls run in (None: the event loop's default)."""

    def __init__(self, store: Store, trace: Trace, executor: Executor | None = None) -> None:
        self.store = store
        self.trace = trace
        self._executor = executor

    async def call(self, function: Callable[..., T], *args: Any) -> T:
        """A store call, off the event loop, in this recorder's threads."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, partial(function, *args))

    async def record(
        self,
        key: ThreadKey,
        content: Content,
        timestamp: str | None = None,
        meta: EntryMeta | None = None,
        expect_index: int | None = None,
        answered_through: int | None = None,
        images: Sequence[ImageRef] = (),
    ) -> Entry | None:
        """Append and print one entry; None when the store dropped it as a duplicate.
        `answered_through`: this entry ends a run that answered the entries up to there."""
        if answered_through is not None:
            ensure_lease()  # a run that may have lost its thread to another ends nothing
        entry = await self.call(
            self.store.append,
            key,
            content,
            timestamp or now_timestamp(),
            meta,
            expect_index,
            answered_through,
            images,
        )
        if entry is not None:
            self.trace.write(entry, key, meta)
        return entry

    async def record_message(
        self,
        key: ThreadKey,
        content: UserContent,
        timestamp: str,
        meta: EntryMeta,
        instructions: str,
        images: Sequence[ImageRef] = (),
    ) -> Entry | None:
        """Record and print a person's message in one write (see `Store.record_message`):
        entry 0 first if the thread is new; None when it was recorded already."""
        copy = ThreadMessage(meta.slack_ts or "", content.userid, content.text)
        entries = await self.call(
            self.store.record_message,
            key,
            content,
            timestamp,
            meta,
            (instructions, now_timestamp()),
            copy,
            images,
        )
        for entry in entries:
            # Entry 0 (the persona) has no metadata of its own.
            self.trace.write(entry, key, meta if entry is entries[-1] else None)
        return entries[-1] if entries else None

    async def record_by(
        self, write: Callable[..., Entry | Sequence[Entry] | None], *args: Any
    ) -> list[Entry]:
        """Record through a store write of its own (one that keeps side metadata with its
        entries in one transaction, see `PanelStore`) and print what it recorded."""
        written = await self.call(write, *args)
        if written is None or isinstance(written, Sequence):
            entries = list(written or [])
        else:
            entries = [written]
        for entry in entries:
            self.trace.write(entry)
        return entries

    def close(self) -> None:
        """Let its threads go (they finish what they were given)."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)

    async def entries(self, key: ThreadKey, start: int = 0) -> list[Entry]:
        return await self.call(self.store.entries, key, start)
