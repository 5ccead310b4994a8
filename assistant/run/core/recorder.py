"""Recording entries: into the store, then onto the console trace
(docs/log-format.md#what-is-recorded, #console-trace).

Every entry of every thread goes through `Recorder.record` (or `record_message`,
`record_by`), so each one is printed exactly once, when it is recorded. The store is
synchronous; its writes run in worker threads so the event loop keeps serving other threads
meanwhile, its reads as `context.storage.async_store.AsyncStore.read` says.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import Any, ParamSpec, Protocol, TypeVar

from assistant.run.core.lease import ensure_lease
from context.entry import Content, Entry, UserContent, now_timestamp
from context.spend import Settlement
from context.storage import EntryMeta, ImageRef, Opening, Store, ThreadKey, ThreadMessage
from context.storage.async_store import AsyncStore
from context.trace import Trace

P = ParamSpec("P")
T = TypeVar("T")


class Recording(Protocol):
    """One entry being recorded, as an observer sees it: the side metadata to write (the
    observer's trace context added), then the entry written (None: a duplicate)."""

    meta: EntryMeta | None

    def done(self, entry: Entry | None) -> None: ...


class EntryObserver(Protocol):
    """Who watches what is recorded (the telemetry, `assistant/telemetry/`)."""

    def recording(self, key: ThreadKey, content: Content, meta: EntryMeta | None) -> Recording: ...

    def posted(self, key: ThreadKey, index: int, ts: str) -> None:
        """Entry `index`, a postMessage, reached Slack as message `ts`."""
        ...

    async def voted(self, key: ThreadKey, index: int, vote: str) -> None:
        """A feedback click on the answer whose postMessage is entry `index` was recorded."""
        ...


class Recorder:
    """`executor`: the threads its store calls run in (None: the event loop's default).
    `observer`: None unless telemetry is on."""

    def __init__(
        self,
        store: Store,
        trace: Trace,
        executor: Executor | None = None,
        observer: EntryObserver | None = None,
        memory_tokens: int | None = None,
    ) -> None:
        self.store = store
        # ASSISTANT_MEMORY_TOKENS: a new thread's memory entry's bound (None: no entry).
        self.memory_tokens = memory_tokens
        self.trace = trace
        self._executor = executor
        self.observer = observer
        self._async = AsyncStore(store, executor)

    def opening(self, persona: Callable[[], str], at: str | None = None) -> Opening:
        """Entry 0 of a thread this write may start, and the channel's memory after it."""
        return Opening(persona, at or now_timestamp(), self.memory_tokens)

    async def call(self, function: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """A store write, off the event loop, in this recorder's threads."""
        return await self._async.write(function, *args, **kwargs)

    async def read(self, function: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """A store read (`AsyncStore.read`), in this recorder's threads if in any."""
        return await self._async.read(function, *args, **kwargs)

    async def record(
        self,
        key: ThreadKey,
        content: Content,
        timestamp: str | None = None,
        meta: EntryMeta | None = None,
        expect_index: int | None = None,
        answered_through: int | None = None,
        images: Sequence[ImageRef] = (),
        settle: Settlement | None = None,
    ) -> Entry | None:
        """Append and print one entry; None when the store dropped it as a duplicate.
        `answered_through`: this entry ends a run that answered the entries up to there;
        `settle`: the model call whose usage `meta` carries, counted in the same write."""
        if answered_through is not None:
            ensure_lease()  # a run that may have lost its thread to another ends nothing
        noted = self.observer.recording(key, content, meta) if self.observer else None
        meta = noted.meta if noted else meta
        entry = await self.call(
            self.store.append,
            key,
            content,
            timestamp or now_timestamp(),
            meta,
            expect_index,
            answered_through,
            images,
            settle,
        )
        if entry is not None:
            self.trace.write(entry, key, meta)
        if noted is not None:
            noted.done(entry)
        return entry

    async def record_message(
        self,
        key: ThreadKey,
        content: UserContent,
        timestamp: str,
        meta: EntryMeta,
        persona: Callable[[], str],
        images: Sequence[ImageRef] = (),
        author: str | None = None,
    ) -> Entry | None:
        """Record and print a person's message in one write (see `Store.record_message`):
        entry 0 first, from `persona`, if the thread is new; None when it was recorded
        already. `author`: who wrote the message, when not the entry's person (a message
        shortcut's), for the thread's copy of it."""
        noted = self.observer.recording(key, content, meta) if self.observer else None
        meta = noted.meta if noted is not None and noted.meta is not None else meta
        copy = ThreadMessage(meta.slack_ts or "", author or content.userid, content.text)
        entries = await self.call(
            self.store.record_message,
            key,
            content,
            timestamp,
            meta,
            self.opening(persona),
            copy,
            images,
        )
        for entry in entries:
            # Entry 0 (the persona) has no metadata of its own.
            self.trace.write(entry, key, meta if entry is entries[-1] else None)
        if noted is not None:
            noted.done(entries[-1] if entries else None)
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

    def posted(self, key: ThreadKey, index: int, ts: str) -> None:
        if self.observer is not None:
            self.observer.posted(key, index, ts)

    async def voted(self, key: ThreadKey, index: int, vote: str) -> None:
        if self.observer is not None:
            await self.observer.voted(key, index, vote)

    def close(self) -> None:
        """Let its threads go (they finish what they were given)."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)

    async def entries(self, key: ThreadKey, start: int = 0) -> list[Entry]:
        return await self.read(self.store.entries, key, start)
