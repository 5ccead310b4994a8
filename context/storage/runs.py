"""Runs over SQL (`RunStore`): the lease that lets one process at a time run a thread, what
is still owed an answer, and what reached Slack.

A thread is owed an answer while one of its entries that wants one lies after its
answered_through; the entry that ends a run raises that mark in its own write (`SqlLog.append`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from sqlalchemy import Connection, Select, literal, or_, select
from sqlalchemy.sql import ColumnElement

from context.storage.copies import keep_copies
from context.storage.engine import Repository
from context.storage.tables import (
    MOMENT,
    entries_table,
    is_thread,
    moment,
    now,
    threads_table,
)
from context.storage.values import OpenStream, Pending, ThreadKey, ThreadMessage


class SqlRuns(Repository):
    """`RunStore` over SQL."""

    def trace_context(self, key: ThreadKey, index: int) -> str | None:
        query = (
            select(entries_table.c.trace_context)
            .join(threads_table)
            .where(is_thread(key), entries_table.c.idx == index)
        )
        with self._db.read() as connection:
            return connection.scalar(query)

    def claim(self, key: ThreadKey, holder: str, seconds: float) -> bool:
        at = datetime.now(UTC)
        with self._db.transaction() as connection:
            done = connection.execute(
                threads_table.update()
                .where(
                    is_thread(key),
                    or_(
                        threads_table.c.run_holder.is_(None),
                        threads_table.c.run_holder == holder,
                        threads_table.c.run_expires < moment(at),
                    ),
                )
                .values(run_holder=holder, run_expires=moment(at + timedelta(seconds=seconds)))
            )
            return done.rowcount == 1

    def release(self, key: ThreadKey, holder: str) -> bool:
        with self._db.transaction() as connection:
            connection.execute(
                threads_table.update()
                .where(is_thread(key), threads_table.c.run_holder == holder)
                .values(run_holder=None, run_expires=None)
            )
            return connection.execute(_owed(key).limit(1)).first() is not None

    def pending(self, key: ThreadKey) -> list[Pending]:
        with self._db.read() as connection:
            rows = connection.execute(_owed(key))
            return [Pending(row.idx, row.slack_ts, row.trace_context) for row in rows]

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
            value = connection.scalar(select(threads_table.c.deferred_since).where(is_thread(key)))
        return datetime.strptime(value, MOMENT).replace(tzinfo=UTC) if value else None

    def defer(self, key: ThreadKey, since: datetime, retry_at: datetime) -> None:
        with self._db.transaction() as connection:
            connection.execute(
                threads_table.update()
                .where(is_thread(key))
                .values(deferred_since=moment(since), retry_at=moment(retry_at))
            )

    def mark_posted(
        self, key: ThreadKey, index: int, slack_ts: str, messages: Sequence[ThreadMessage] = ()
    ) -> None:
        with self._db.transaction() as connection:
            thread_id = connection.scalar(select(threads_table.c.id).where(is_thread(key)))
            if thread_id is None:
                return
            connection.execute(
                entries_table.update()
                .where(entries_table.c.thread_id == thread_id, entries_table.c.idx == index)
                .values(slack_ts=slack_ts)
            )
            keep_copies(connection, thread_id, messages)
            posted = [OpenStream(message.ts) for message in messages]
            _change_streams(connection, is_thread(key), (), posted)

    def set_open_streams(self, key: ThreadKey, streams: Sequence[str]) -> None:
        with self._db.transaction() as connection:
            connection.execute(
                threads_table.update()
                .where(is_thread(key))
                .values(open_streams=" ".join(streams) or None)
            )

    def change_open_streams(
        self, key: ThreadKey, add: Sequence[OpenStream] = (), remove: Sequence[OpenStream] = ()
    ) -> None:
        with self._db.transaction() as connection:
            _change_streams(connection, is_thread(key), add, remove)

    def open_streams(self, key: ThreadKey) -> list[OpenStream]:
        with self._db.read() as connection:
            value = connection.scalar(select(threads_table.c.open_streams).where(is_thread(key)))
        return [OpenStream.parse(token) for token in (value or "").split()]


def _change_streams(
    connection: Connection,
    thread: ColumnElement[bool],
    add: Sequence[OpenStream],
    remove: Sequence[OpenStream],
) -> None:
    """Read-modify-write of a thread's open streams (space-separated tokens, see
    `OpenStream.token`), its row locked meanwhile (SQLite: the writer's lock)."""
    value = connection.scalar(
        select(threads_table.c.open_streams).where(thread).with_for_update()
    )
    tokens = (value or "").split()
    for stream in remove:
        if stream.token() in tokens:
            tokens.remove(stream.token())
    tokens += [stream.token() for stream in add]
    if tokens != (value or "").split():
        connection.execute(
            threads_table.update().where(thread).values(open_streams=" ".join(tokens) or None)
        )


def _owed(key: ThreadKey) -> Select[tuple[int, str | None, str | None]]:
    """The thread's entries that want an answer and lie after its answered_through."""
    return (
        select(entries_table.c.idx, entries_table.c.slack_ts, entries_table.c.trace_context)
        .join(threads_table)
        .where(
            is_thread(key),
            entries_table.c.wants_answer,
            entries_table.c.idx > threads_table.c.answered_through,
        )
        .order_by(entries_table.c.idx)
    )
