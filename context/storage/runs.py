"""Runs over SQL (`RunStore`): the lease that lets one process at a time run a thread, what
is still owed an answer, and what reached Slack.

A thread is owed an answer while one of its entries that wants one lies after its
answered_through; the entry that ends a run raises that mark in its own write (`SqlLog.append`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from sqlalchemy import Connection, bindparam, literal, or_, select

from context.storage.copies import keep_copies
from context.storage.engine import Repository
from context.storage.tables import (
    MOMENT,
    THREAD,
    THREAD_ID,
    entries_table,
    moment,
    now,
    thread_values,
    threads_table,
)
from context.storage.values import OpenStream, Pending, ThreadKey, ThreadMessage
from context.storage.wakeups import notify_owed

# The statements of a run, built once (see `THREAD`).
_threads = threads_table.c
_CLAIM = (
    threads_table.update()
    .where(
        THREAD,
        or_(
            _threads.run_holder.is_(None),
            _threads.run_holder == bindparam("holder"),
            _threads.run_expires < bindparam("at"),
        ),
    )
    .values(run_holder=bindparam("holder"), run_expires=bindparam("expires"))
)
_RELEASE = (
    threads_table.update()
    .where(THREAD, _threads.run_holder == bindparam("holder"))
    .values(run_holder=None, run_expires=None)
)
# The thread's entries that want an answer and lie after its answered_through.
_OWED = (
    select(
        entries_table.c.idx,
        entries_table.c.slack_ts,
        entries_table.c.trace_context,
        entries_table.c.action_token,
        entries_table.c.addressed,
    )
    .join(threads_table)
    .where(THREAD, entries_table.c.wants_answer, entries_table.c.idx > _threads.answered_through)
    .order_by(entries_table.c.idx)
)
_OWES = _OWED.limit(1)
_TRACE_CONTEXT = (
    select(entries_table.c.trace_context)
    .join(threads_table)
    .where(THREAD, entries_table.c.idx == bindparam("at"))
)
_DEFERRED_SINCE = select(_threads.deferred_since).where(THREAD)
_DEFER = (
    threads_table.update()
    .where(THREAD)
    .values(deferred_since=bindparam("since"), retry_at=bindparam("retry"))
)
_MARK_POSTED = (
    entries_table.update()
    .where(
        entries_table.c.thread_id == bindparam("of_thread"),
        entries_table.c.idx == bindparam("at"),
    )
    .values(slack_ts=bindparam("posted_ts"))
)
_OPEN_STREAMS = select(_threads.open_streams).where(THREAD)
_OPEN_STREAMS_LOCKED = _OPEN_STREAMS.with_for_update()
_SET_OPEN_STREAMS = threads_table.update().where(THREAD).values(open_streams=bindparam("streams"))


class SqlRuns(Repository):
    """`RunStore` over SQL."""

    def trace_context(self, key: ThreadKey, index: int) -> str | None:
        with self._db.read() as connection:
            return connection.scalar(_TRACE_CONTEXT, {**thread_values(key), "at": index})

    def claim(self, key: ThreadKey, holder: str, seconds: float) -> bool:
        at = datetime.now(UTC)
        expires = moment(at + timedelta(seconds=seconds))
        values = {**thread_values(key), "holder": holder, "at": moment(at), "expires": expires}
        with self._db.transaction() as connection:
            return connection.execute(_CLAIM, values).rowcount == 1

    def release(self, key: ThreadKey, holder: str) -> bool:
        values = thread_values(key)
        with self._db.transaction() as connection:
            connection.execute(_RELEASE, {**values, "holder": holder})
            return connection.execute(_OWES, values).first() is not None

    def pending(self, key: ThreadKey) -> list[Pending]:
        with self._db.read() as connection:
            rows = connection.execute(_OWED, thread_values(key))
            return [
                Pending(row.idx, row.slack_ts, row.trace_context, row.action_token, row.addressed)
                for row in rows
            ]

    def waiting_threads(self) -> list[ThreadKey]:
        owed = (
            select(literal(1))
            .where(
                entries_table.c.thread_id == threads_table.c.id,
                entries_table.c.wants_answer,
                entries_table.c.idx > threads_table.c.answered_through,
            )
            .exists()
        )
        at = now()
        free = or_(threads_table.c.run_holder.is_(None), threads_table.c.run_expires < at)
        due = or_(threads_table.c.retry_at.is_(None), threads_table.c.retry_at <= at)
        # A stream not confirmed finished or gone keeps its thread waiting: the run's tidy-up.
        streams = threads_table.c.open_streams.isnot(None)
        query = (
            select(threads_table.c.team, threads_table.c.channel, threads_table.c.thread_ts)
            .where(or_(owed, streams), free, due)
            .order_by(threads_table.c.updated_at)
        )
        with self._db.read() as connection:
            return [ThreadKey(*row) for row in connection.execute(query)]

    def deferred_since(self, key: ThreadKey) -> datetime | None:
        with self._db.read() as connection:
            value = connection.scalar(_DEFERRED_SINCE, thread_values(key))
        return datetime.strptime(value, MOMENT).replace(tzinfo=UTC) if value else None

    def defer(self, key: ThreadKey, since: datetime | None, retry_at: datetime) -> None:
        began = moment(since) if since is not None else None
        values = {**thread_values(key), "since": began, "retry": moment(retry_at)}
        with self._db.transaction() as connection:
            connection.execute(_DEFER, values)
            if retry_at <= datetime.now(UTC):  # due now (an approval's click): wake workers
                thread_id = connection.scalar(THREAD_ID, thread_values(key))
                if thread_id is not None:
                    notify_owed(connection, thread_id)

    def mark_posted(
        self, key: ThreadKey, index: int, slack_ts: str, messages: Sequence[ThreadMessage] = ()
    ) -> None:
        values = thread_values(key)
        with self._db.transaction() as connection:
            thread_id = connection.scalar(THREAD_ID, values)
            if thread_id is None:
                return
            posted = {"of_thread": thread_id, "at": index, "posted_ts": slack_ts}
            connection.execute(_MARK_POSTED, posted)
            keep_copies(connection, thread_id, messages)
            streams = [OpenStream(message.ts) for message in messages]
            _change_streams(connection, values, (), streams)

    def set_open_streams(self, key: ThreadKey, streams: Sequence[str]) -> None:
        values = {**thread_values(key), "streams": " ".join(streams) or None}
        with self._db.transaction() as connection:
            connection.execute(_SET_OPEN_STREAMS, values)

    def change_open_streams(
        self, key: ThreadKey, add: Sequence[OpenStream] = (), remove: Sequence[OpenStream] = ()
    ) -> None:
        with self._db.transaction() as connection:
            _change_streams(connection, thread_values(key), add, remove)

    def open_streams(self, key: ThreadKey) -> list[OpenStream]:
        with self._db.read() as connection:
            value = connection.scalar(_OPEN_STREAMS, thread_values(key))
        return [OpenStream.parse(token) for token in (value or "").split()]


def _change_streams(
    connection: Connection,
    thread: dict[str, str],
    add: Sequence[OpenStream],
    remove: Sequence[OpenStream],
) -> None:
    """Read-modify-write of a thread's open streams (space-separated tokens, see
    `OpenStream.token`), its row locked meanwhile (SQLite: the writer's lock). `thread`:
    `thread_values` of its key."""
    value = connection.scalar(_OPEN_STREAMS_LOCKED, thread)
    tokens = (value or "").split()
    for stream in remove:
        if stream.token() in tokens:
            tokens.remove(stream.token())
    tokens += [stream.token() for stream in add]
    if tokens != (value or "").split():
        connection.execute(_SET_OPEN_STREAMS, {**thread, "streams": " ".join(tokens) or None})
