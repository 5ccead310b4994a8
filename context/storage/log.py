"""The context log over SQL (`LogStore`): placing and recording entries, reading them back.

A thread's row holds the tail of its log (next index, turn, last speaker), locked for the
length of a write, so an append reads one row instead of every entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from sqlalchemy import Connection, Row, bindparam, literal, select

from context.entry import Content, Entry, Role, UserContent, entry_from_json, make_entry, role_of
from context.log import Tail
from context.spend import Settlement
from context.storage.copies import keep_copies
from context.storage.engine import Repository
from context.storage.memory import opening_memory
from context.storage.spend import settle_in
from context.storage.tables import (
    THREAD,
    THREAD_ID,
    entries_table,
    entry_images_table,
    now,
    thread_values,
    threads_table,
)
from context.storage.thread_rows import lock_thread
from context.storage.usage import author_of, person_for
from context.storage.values import EntryMeta, ImageRef, Opening, ThreadKey, ThreadMessage
from context.storage.wakeups import notify_owed


class SqlLog(Repository):
    """`LogStore` over SQL."""

    def append(
        self,
        key: ThreadKey,
        content: Content,
        timestamp: str,
        meta: EntryMeta | None = None,
        expect_index: int | None = None,
        answered_through: int | None = None,
        images: Sequence[ImageRef] = (),
        settle: Settlement | None = None,
    ) -> Entry | None:
        claimed = False
        try:
            with self._db.transaction() as connection:
                thread = lock_thread(connection, key)
                if expect_index is not None and thread.next_index != expect_index:
                    return None
                recorded = append_locked(
                    connection,
                    thread,
                    content,
                    timestamp,
                    meta or EntryMeta(),
                    images=images,
                    answered_through=answered_through,
                )
                claimed = _settle(connection, settle)
        except BaseException:
            if claimed and settle is not None:
                settle.release()  # rolled back: counted by whoever settles it next
            raise
        return recorded[-1] if recorded else None

    def record_message(
        self,
        key: ThreadKey,
        content: UserContent,
        timestamp: str,
        meta: EntryMeta,
        opening: Opening,
        copy: ThreadMessage,
        images: Sequence[ImageRef] = (),
    ) -> list[Entry]:
        with self._db.transaction() as connection:
            thread = lock_thread(connection, key)
            recorded = append_locked(
                connection, thread, content, timestamp, meta, opening, images=images
            )
            if recorded:
                keep_copies(connection, thread.id, [copy])
        return recorded

    def entries(self, key: ThreadKey, start: int = 0) -> list[Entry]:
        names = {"team": key.team, "channel": key.channel, "thread_ts": key.thread_ts}
        with self._db.read() as connection:
            rows = connection.scalars(_ENTRIES_FROM, {**names, "start": start})
            return [entry_from_json(text) for text in rows]

    def set_usage(
        self, key: ThreadKey, index: int, meta: EntryMeta, settle: Settlement | None = None
    ) -> None:
        usage = {name: getattr(meta, name) for name in _USAGE}
        claimed = False
        try:
            with self._db.transaction() as connection:
                connection.execute(_SET_USAGE, {**thread_values(key), "at": index, **usage})
                claimed = _settle(connection, settle)
        except BaseException:
            if claimed and settle is not None:
                settle.release()  # rolled back: counted by whoever settles it next
            raise

    def has_thread(self, key: ThreadKey) -> bool:
        with self._db.read() as connection:
            return connection.scalar(THREAD_ID, thread_values(key)) is not None

    def has_message(self, key: ThreadKey, slack_ts: str) -> bool:
        values = {**thread_values(key), "message_ts": slack_ts}
        with self._db.read() as connection:
            return connection.execute(_HAS_MESSAGE, values).first() is not None


def _settle(connection: Connection, settle: Settlement | None) -> bool:
    """The call's hold settled with its usage, in the transaction that records that usage
    (both or neither); whether this write claimed it. Its `warnings` are set here, before
    the commit: the caller reads them only once its write has returned."""
    if settle is None or not settle.claim():
        return False
    try:
        settle.warnings = settle_in(connection, settle.hold, settle.used, settle.limits)
    except BaseException:
        settle.release()
        raise
    return True


# The statements of every append, built once: building and compiling Core statements costs
# several times what SQLite itself takes to run them.
_ENTRIES_FROM = (
    select(entries_table.c.content_json)
    .join(threads_table)
    .where(
        threads_table.c.team == bindparam("team"),
        threads_table.c.channel == bindparam("channel"),
        threads_table.c.thread_ts == bindparam("thread_ts"),
        entries_table.c.idx >= bindparam("start"),
    )
    .order_by(entries_table.c.idx)
)
_INSERT_ENTRY = entries_table.insert().values(person=person_for(bindparam("of_thread")))
_INSERT_IMAGES = entry_images_table.insert()
_USAGE = ("model", "prompt_tokens", "cached_tokens", "completion_tokens", "latency_ms")
_SET_USAGE = (
    entries_table.update()
    .where(entries_table.c.thread_id == THREAD_ID.scalar_subquery())
    .where(entries_table.c.idx == bindparam("at"))
    .values({name: bindparam(name) for name in _USAGE})
)
_HAS_MESSAGE = (
    select(literal(1))
    .select_from(entries_table.join(threads_table))
    .where(
        THREAD,
        entries_table.c.role == "user",
        entries_table.c.slack_ts == bindparam("message_ts"),
    )
    .limit(1)
)
_SAVE_TAIL = (
    threads_table.update()
    .where(threads_table.c.id == bindparam("thread_id"))
    .values(
        next_index=bindparam("next_index"),
        turn=bindparam("turn"),
        last_speaker=bindparam("last_speaker"),
        updated_at=bindparam("updated_at"),
        answered_through=bindparam("answered_through"),
    )
)
_END_DEFERRAL = (
    threads_table.update()
    .where(threads_table.c.id == bindparam("thread_id"))
    .values(deferred_since=None, retry_at=None)
)
_SAME_EVENT = (
    select(literal(1))
    .where(entries_table.c.thread_id == bindparam("thread_id"))
    .where(entries_table.c.event_id == bindparam("event_id"))
    .limit(1)
)
_SAME_MESSAGE = (
    select(literal(1))
    .where(entries_table.c.thread_id == bindparam("thread_id"))
    .where(entries_table.c.slack_ts == bindparam("slack_ts"), entries_table.c.role == "user")
    .limit(1)
)


def append_locked(
    connection: Connection,
    thread: Row[*tuple[Any, ...]],
    content: Content,
    timestamp: str,
    meta: EntryMeta,
    opening: Opening | None = None,
    *,
    images: Sequence[ImageRef] = (),
    answered_through: int | None = None,
) -> list[Entry]:
    """Every append, inside the caller's transaction, after `lock_thread` (so a write can
    record an entry together with facts of another concern): entry 0 from `opening` first
    when the thread has none, then the entry; its tail saved. [] for a duplicate, writing
    nothing. `answered_through`: the entry ends a run that answered up to that index."""
    if _already_recorded(connection, thread, role_of(content), meta):
        return []
    tail = Tail(thread.next_index, thread.turn, thread.last_speaker)
    recorded = []
    if opening is not None and thread.next_index == 0:
        opened, tail = _open(connection, thread, tail, opening)
        recorded.extend(opened)
    ends_run = answered_through is not None
    entry, tail = _insert(connection, thread.id, tail, content, timestamp, meta, images, ends_run)
    recorded.append(entry)
    # The run's answered mark rides on the entry that ends the run: one fact, one write.
    done = max(thread.answered_through, answered_through or -1)
    _save_tail(connection, thread.id, tail, answered_through=done)
    if ends_run:  # the run has ended: so has any deferral of it
        connection.execute(_END_DEFERRAL, {"thread_id": thread.id})
    return recorded


def _open(
    connection: Connection, thread: Row[*tuple[Any, ...]], tail: Tail, opening: Opening
) -> tuple[list[Entry], Tail]:
    """Entry 0 of a new thread, its persona asked for now that it is needed; then the
    channel's memory entry, read in the same transaction (a memory written meanwhile is in
    this thread or the next, never half)."""
    first, tail = _insert(
        connection, thread.id, tail, opening.persona(), opening.timestamp, EntryMeta()
    )
    if opening.memory_tokens is None:
        return [first], tail
    text = opening_memory(connection, thread.team, thread.channel, opening.memory_tokens)
    if text is None:
        return [first], tail
    memory, tail = _insert(connection, thread.id, tail, text, opening.timestamp, EntryMeta())
    return [first, memory], tail


def _insert(
    connection: Connection,
    thread_id: int,
    tail: Tail,
    content: Content,
    timestamp: str,
    meta: EntryMeta,
    images: Sequence[ImageRef] = (),
    ends_run: bool = False,
) -> tuple[Entry, Tail]:
    """Place one entry after `tail` and write it with its side data; the entry and new tail."""
    index, turn, after = tail.place(role_of(content))
    entry = make_entry(index, turn, timestamp, content)
    connection.execute(
        _INSERT_ENTRY,
        {
            "thread_id": thread_id,
            "idx": index,
            "role": entry.role,
            "turn": turn,
            "timestamp": timestamp,
            "content_json": entry.canonical_json(),
            "recorded_at": now(),
            "author": author_of(content),
            "of_thread": thread_id,
            "ends_run": ends_run,
            **asdict(meta),
        },
    )
    if images:
        connection.execute(
            _INSERT_IMAGES,
            [
                {"thread_id": thread_id, "idx": index, "position": n, **asdict(image)}
                for n, image in enumerate(images)
            ],
        )
    if meta.wants_answer:  # workers are woken at the commit (context/storage/wakeups.py)
        notify_owed(connection, thread_id)
    return entry, after


def _save_tail(connection: Connection, thread_id: int, tail: Tail, answered_through: int) -> None:
    connection.execute(
        _SAVE_TAIL,
        {
            "thread_id": thread_id,
            "next_index": tail.next_index,
            "turn": tail.turn,
            "last_speaker": tail.last_speaker,
            "updated_at": now(),
            "answered_through": answered_through,
        },
    )


def _already_recorded(
    connection: Connection, thread: Row[*tuple[Any, ...]], role: Role, meta: EntryMeta
) -> bool:
    """Slack retries an event with the same event id, and sends a channel mention twice
    (`app_mention` and `message`) with different event ids and the same message ts.
    `thread`: its locked row (a thread with no entry yet has recorded nothing)."""
    if thread.next_index == 0:
        return False
    thread_id = thread.id
    if meta.event_id is not None:
        found = connection.execute(_SAME_EVENT, {"thread_id": thread_id, "event_id": meta.event_id})
        if found.first() is not None:
            return True
    if role == "user" and meta.slack_ts is not None:
        found = connection.execute(
            _SAME_MESSAGE, {"thread_id": thread_id, "slack_ts": meta.slack_ts}
        )
        return found.first() is not None
    return False
