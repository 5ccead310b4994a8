"""Waking the workers (docs/architecture.md#ingress-and-workers): on PostgreSQL, the write that
records an entry owed an answer also sends a `NOTIFY` naming its thread, and `assistant worker`
processes `LISTEN` for it, so a run starts as soon as the ingress has recorded its request.

The notification is sent in the recording transaction: PostgreSQL delivers it at the commit,
and not at all if the write rolls back, so no worker is woken for an entry that is not there
and none looks before it is. A notification can still be lost (a listener's connection down,
a worker not yet listening): the sweep (`RunScheduler`, every half lease) is the safety net.

The channel is named after the schema (a hash of `current_schema()`, so any schema name
fits PostgreSQL's 63 bytes): apps sharing a database in different schemas do not wake each
other. Nothing happens on SQLite, whose processes share one machine and one file.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable

from sqlalchemy import Connection, text
from sqlalchemy.engine import URL

from context.storage.values import ThreadKey
from context.urls import shown_url

log = logging.getLogger(__name__)

CHANNEL = "'assistant_owed_' || left(md5(current_schema()), 16)"
RETRY_SECONDS = 1.0  # a listener that lost its connection tries again after this long,
MAX_RETRY_SECONDS = 30.0  # then twice as long each time it fails again, up to this

_NOTIFY_OWED = text(
    f"SELECT pg_notify({CHANNEL}, json_build_object("
    "'team', team, 'channel', channel, 'thread_ts', thread_ts)::text) "
    "FROM threads WHERE id = :thread_id"
)


def notify_owed(connection: Connection, thread_id: int) -> None:
    """In the transaction recording an owed entry of thread `thread_id`: wake the listeners
    at its commit (PostgreSQL; nothing on SQLite)."""
    if connection.dialect.name == "postgresql":
        connection.execute(_NOTIFY_OWED, {"thread_id": thread_id})


def _key(payload: str) -> ThreadKey | None:
    try:
        fields = json.loads(payload)
        return ThreadKey(str(fields["team"]), str(fields["channel"]), str(fields["thread_ts"]))
    except (ValueError, KeyError, TypeError):
        return None  # not ours (someone else's NOTIFY on the channel): the sweep is enough


async def listen_for_owed(
    url: URL,
    owed: Callable[[ThreadKey], None],
    listening: Callable[[], None],
    retry: float = RETRY_SECONDS,
) -> None:
    """Until cancelled: `owed(key)` for each thread an entry owed an answer was recorded in.
    `listening()` each time the listener (re)starts listening: what was sent while it did not
    listen is lost, so the caller looks for owed threads then. A lost connection is one
    warning, and a new one `retry` seconds later (doubling while it fails, up to
    MAX_RETRY_SECONDS; the sweep runs meanwhile)."""
    import psycopg  # PostgreSQL only: the driver loads with it
    from psycopg import sql

    args, params = url.get_dialect()().create_connect_args(url)
    params.pop("context", None)  # SQLAlchemy's adapters map: the driver's own defaults do
    where = shown_url(url)
    wait = retry
    while True:
        try:
            async with await psycopg.AsyncConnection.connect(
                *args, **params, autocommit=True
            ) as connection:
                cursor = await connection.execute(f"SELECT {CHANNEL}")
                row = await cursor.fetchone()
                assert row is not None
                await connection.execute(sql.SQL("LISTEN {}").format(sql.Identifier(row[0])))
                log.info("listening for threads owed an answer on %s", where)
                wait = retry
                listening()
                async for note in connection.notifies():
                    key = _key(note.payload)
                    if key is not None:
                        owed(key)
        except psycopg.Error as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            log.warning(
                "listening for threads owed an answer failed (%s: %s); again in %g s, the "
                "sweep meanwhile",
                type(exc).__name__,
                first,
                wait,
            )
        await asyncio.sleep(wait)
        wait = min(wait * 2, MAX_RETRY_SECONDS)
