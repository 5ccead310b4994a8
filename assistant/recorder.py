"""Recording entries: into the store, then onto the console trace (SPEC §2.4, §5).

Every entry of every thread goes through `Recorder.record`, so each one is printed exactly
once, when it is recorded. The store is synchronous; its calls run in worker threads so the
event loop keeps serving other threads meanwhile.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from context.entry import Content, Entry, now_timestamp
from context.render import TraceWriter
from context.storage import EntryMeta, ImageRef, Store, ThreadKey


class Recorder:
    def __init__(self, store: Store, trace: TraceWriter) -> None:
        self.store = store
        self._trace = trace

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
        entry = await asyncio.to_thread(
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
            self._trace.write(entry)
        return entry

    async def start_thread(self, key: ThreadKey, instructions: str) -> None:
        """Give a thread its entry 0, the persona, unless it has one (from any process)."""
        if not await asyncio.to_thread(self.store.has_thread, key):
            await self.record(key, instructions, expect_index=0)

    async def entries(self, key: ThreadKey, start: int = 0) -> list[Entry]:
        return await asyncio.to_thread(self.store.entries, key, start)
