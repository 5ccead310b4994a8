"""A thread's row, locked for the length of a write: where every write that records an
entry starts (`log`, `panel`). It holds the tail of the thread's log, so an append reads one
row, not the entries."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Row, bindparam, select
from sqlalchemy.dialects import postgresql, sqlite

from context.storage.tables import now, threads_table
from context.storage.values import ThreadKey


def lock_thread(connection: Connection, key: ThreadKey) -> Row[*tuple[Any, ...]]:
    """The thread's row, created if new, locked until the transaction ends."""
    names = {"team": key.team, "channel": key.channel, "thread_ts": key.thread_ts}
    # FOR UPDATE on PostgreSQL; SQLite renders none, BEGIN IMMEDIATE already locked it all.
    thread = connection.execute(_LOCK_THREAD, names).first()
    if thread is None:
        stamp = now()
        insert = (
            _INSERT_THREAD_POSTGRESQL
            if connection.dialect.name == "postgresql"
            else _INSERT_THREAD_SQLITE
        )
        # The row this transaction made is locked by it; none back: another made it first.
        made = connection.execute(insert, {**names, "created_at": stamp, "updated_at": stamp})
        thread = made.first() or connection.execute(_LOCK_THREAD, names).one()
    return thread


# Built once: building and compiling Core statements costs several times what SQLite itself
# takes to run them. A new row comes back from its INSERT (none: another made it first).
_INSERT_THREAD_POSTGRESQL = (
    postgresql.insert(threads_table)
    .on_conflict_do_nothing(index_elements=["team", "channel", "thread_ts"])
    .returning(*threads_table.c)
)
_INSERT_THREAD_SQLITE = (
    sqlite.insert(threads_table)
    .on_conflict_do_nothing(index_elements=["team", "channel", "thread_ts"])
    .returning(*threads_table.c)
)
_LOCK_THREAD = (
    select(threads_table)
    .where(
        threads_table.c.team == bindparam("team"),
        threads_table.c.channel == bindparam("channel"),
        threads_table.c.thread_ts == bindparam("thread_ts"),
    )
    .with_for_update()
)
