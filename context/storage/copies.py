"""Copies of a thread's Slack messages (`MessageCopies`): what getThreadHistory reads instead
of asking Slack again. They follow edits and deletions, which the log never does."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

from sqlalchemy import Connection, Insert, delete, select
from sqlalchemy.dialects import postgresql, sqlite

from context.storage.engine import Repository
from context.storage.tables import is_thread, thread_messages_table, threads_table
from context.storage.values import ThreadKey, ThreadMessage


def _upsert(statement: postgresql.Insert | sqlite.Insert) -> Insert:
    return statement.on_conflict_do_update(
        index_elements=["thread_id", "ts"],
        set_={"user": statement.excluded.user, "text": statement.excluded.text},
    )


# Built once: building a Core statement costs more than running it.
_UPSERT_POSTGRESQL = _upsert(postgresql.insert(thread_messages_table))
_UPSERT_SQLITE = _upsert(sqlite.insert(thread_messages_table))


def keep_copies(connection: Connection, thread_id: int, messages: Sequence[ThreadMessage]) -> None:
    """Write (or update, by ts) copies of messages of the thread `thread_id`, in the caller's
    transaction: a message and its copy, or a post and its copies, are one write."""
    if not messages:
        return
    upsert = _UPSERT_POSTGRESQL if connection.dialect.name == "postgresql" else _UPSERT_SQLITE
    connection.execute(upsert, [{"thread_id": thread_id, **asdict(m)} for m in messages])


class SqlMessageCopies(Repository):
    """`MessageCopies` over SQL."""

    def remember_messages(
        self, key: ThreadKey, messages: list[ThreadMessage], complete: bool = False
    ) -> None:
        with self._db.transaction() as connection:
            thread_id = connection.scalar(select(threads_table.c.id).where(is_thread(key)))
            if thread_id is None:
                return
            keep_copies(connection, thread_id, messages)
            if complete:
                connection.execute(
                    threads_table.update()
                    .where(threads_table.c.id == thread_id)
                    .values(history_complete=True)
                )

    def forget_message(self, key: ThreadKey, ts: str) -> None:
        thread_id = select(threads_table.c.id).where(is_thread(key)).scalar_subquery()
        with self._db.transaction() as connection:
            connection.execute(
                delete(thread_messages_table).where(
                    thread_messages_table.c.thread_id == thread_id,
                    thread_messages_table.c.ts == ts,
                )
            )

    def thread_messages(self, key: ThreadKey) -> tuple[list[ThreadMessage], bool]:
        with self._db.read() as connection:
            thread = connection.execute(
                select(threads_table.c.id, threads_table.c.history_complete).where(is_thread(key))
            ).first()
            if thread is None:
                return [], False
            rows = connection.execute(
                select(
                    thread_messages_table.c.ts,
                    thread_messages_table.c.user,
                    thread_messages_table.c.text,
                )
                .where(thread_messages_table.c.thread_id == thread.id)
                # Slack ts are fixed-width decimals of seconds: text order is time order.
                .order_by(thread_messages_table.c.ts)
            )
            return [ThreadMessage(*row) for row in rows], bool(thread.history_complete)
