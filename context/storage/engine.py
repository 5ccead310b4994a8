"""The one engine every repository shares, and the one way they write (`Database.transaction`).

Placement is serialized per thread by a row lock on PostgreSQL and by SQLite's single writer
lock, taken at BEGIN IMMEDIATE; the primary key (thread_id, idx) backs it up in the database.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, create_engine, event, func, select
from sqlalchemy.engine import URL, ExceptionContext, make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import ConnectionPoolEntry

MIGRATIONS = Path(__file__).parent / "migrations"
SQLITE_BUSY_TIMEOUT_S = 30.0
# Any fixed number: every process migrating the same PostgreSQL database takes this lock.
MIGRATION_LOCK_KEY = 0x5C0_17E7


def create_store_engine(url: str | URL) -> Engine:
    # A database restart or failover leaves a server's pooled connections dead: each is
    # checked when taken (one round trip) and replaced, rather than failing a run. A SQLite
    # file has no server to lose: its connections go unchecked (a run takes twenty).
    server = make_url(url).get_backend_name() != "sqlite"
    engine = create_engine(
        url,
        pool_pre_ping=server,
        # SQL parameters are message text: an error's log line must not carry them.
        hide_parameters=True,
    )
    if engine.dialect.name == "sqlite":
        _take_over_sqlite_transactions(engine)
    else:
        event.listen(engine, "handle_error", _read_only_is_a_disconnect)
    return engine


# PostgreSQL's read_only_sql_transaction: a write on a server that takes none just now, as after
# a failover (the old primary a standby, or the new one not yet promoted).
READ_ONLY_SQLSTATE = "25006"


def _read_only_is_a_disconnect(context: ExceptionContext) -> None:
    """SQLAlchemy's documented way to treat more errors as disconnects: a read-only server's
    sessions are dropped from the pool (all of them), and new ones are made, which reach
    whichever server takes writes once the failover is done. The error then reads as a lost
    connection (`connection_invalidated`), which every caller already takes for a passing
    one (`assistant.run.scheduling.scheduler.store_unavailable`)."""
    if getattr(context.original_exception, "sqlstate", None) == READ_ONLY_SQLSTATE:
        context.is_disconnect = True


def _take_over_sqlite_transactions(engine: Engine) -> None:
    """SQLAlchemy's documented pysqlite recipe: sqlite3's own BEGIN comes late (at the first
    write) and deferred, so the driver's is turned off and writers BEGIN IMMEDIATE themselves
    (`_writer`): they hold the write lock before they read a tail, so two never place an
    entry at the same index. A read is one statement, its own snapshot (the one read of
    two, `thread_messages`, needs none across them), so it takes no BEGIN."""

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: sqlite3.Connection, _record: ConnectionPoolEntry) -> None:
        dbapi_connection.isolation_level = None
        dbapi_connection.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
        dbapi_connection.execute("PRAGMA foreign_keys = ON")
        # WAL: readers never wait for the writer, and a commit is one append to the WAL file.
        # With synchronous=NORMAL a commit survives a crash of the process (the chaos a bot
        # meets); only losing power can roll back the last commits.
        dbapi_connection.execute("PRAGMA synchronous = NORMAL")
        # Each pooled connection keeps its own page cache (2 MB by default), and a busy
        # process holds several: bounded small, so memory does not grow with the database
        # (the OS caches the file anyway).
        dbapi_connection.execute("PRAGMA cache_size = -512")
        if dbapi_connection.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            # The switch needs the database to itself and does not wait for it; a process
            # that loses the race finds the file switched by the winner, or a later
            # connection switches it: either way appends stay correct.
            with contextlib.suppress(sqlite3.OperationalError):
                dbapi_connection.execute("PRAGMA journal_mode = WAL")


def _begin_immediate(connection: Connection) -> None:
    """A writer's BEGIN IMMEDIATE, on the driver's connection itself: through SQLAlchemy's
    execution machinery it cost more CPU than SQLite's work for it. Its error is
    SQLAlchemy's, as a statement's would be."""
    try:
        # driver_connection is None only once the connection is closed; a writer's is open.
        connection.connection.driver_connection.execute("BEGIN IMMEDIATE")  # type: ignore[union-attr]
    except sqlite3.OperationalError as exc:
        raise OperationalError("BEGIN IMMEDIATE", None, exc) from exc


def _journal_mode(engine: Engine) -> str:
    with engine.connect() as connection:
        return str(connection.exec_driver_sql("PRAGMA journal_mode").scalar()).lower()


def _writer(engine: Engine) -> Engine:
    """The engine for writes: the same pool; on SQLite its transactions BEGIN IMMEDIATE
    (an engine of its own, so that only writes carry the event: an engine with no event
    listeners skips SQLAlchemy's event dispatch at every statement, which was most of a
    read's CPU)."""
    writer = engine.execution_options()
    if engine.dialect.name == "sqlite":
        event.listen(writer, "begin", _begin_immediate)
    return writer


def migration_config(connection: Connection) -> Config:
    """An Alembic config without alembic.ini: the migrations run on `connection`."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS).replace("%", "%%"))
    config.attributes["connection"] = connection
    return config


def migrate(engine: Engine) -> None:
    """Upgrade the schema to head; safe to run from several processes at once."""
    with _writer(engine).begin() as connection:
        if connection.dialect.name == "postgresql":
            # Released at commit; the next process then finds the schema at head.
            connection.execute(select(func.pg_advisory_xact_lock(MIGRATION_LOCK_KEY)))
        command.upgrade(migration_config(connection), "head")


class WriteQueue:
    """One writer at a time, urgent ones first.

    SQLite has one writer at a time: this process's threads queue here, where a release
    wakes the next at once, rather than in SQLite's busy handler, which polls with sleeps of
    up to 100 ms. Under load the queue is long (runs write several times a step), and an
    event's acknowledgement must not wait behind it. Other processes still meet at the busy
    timeout."""

    def __init__(self) -> None:
        self._free = threading.Condition()
        self._busy = False
        self._urgent_waiting = 0

    @contextlib.contextmanager
    def turn(self, urgent: bool) -> Iterator[None]:
        with self._free:
            if urgent:
                self._urgent_waiting += 1
                self._free.wait_for(lambda: not self._busy)
                self._urgent_waiting -= 1
            else:
                self._free.wait_for(lambda: not self._busy and not self._urgent_waiting)
            self._busy = True
        try:
            yield
        finally:
            with self._free:
                self._busy = False
                self._free.notify_all()


@dataclass(frozen=True)
class Database:
    """The engine of one database, migrated to head, with the write queue of this process:
    what every repository of the store is built over."""

    engine: Engine
    # The same engine, its transactions BEGIN IMMEDIATE on SQLite (see above): for the
    # writes of others (slack-sdk's stores); the store's own are `transaction()`'s.
    writes: Engine
    # SQLite only: PostgreSQL has a writer per connection, its rows locked one by one.
    queue: WriteQueue | None
    # SQLite in WAL mode: a read takes no lock a writer holds, so it never waits.
    local_reads: bool = False
    urgent: bool = False

    @classmethod
    def open(cls, url: str | URL) -> Database:
        engine = create_store_engine(url)
        one_writer = engine.dialect.name == "sqlite"
        try:
            migrate(engine)
            local_reads = one_writer and _journal_mode(engine) == "wal"
        except BaseException:
            engine.dispose()
            raise
        return cls(engine, _writer(engine), WriteQueue() if one_writer else None, local_reads)

    def served_first(self) -> Database:
        """The same database, its writes served before others' when they queue."""
        return dataclasses.replace(self, urgent=True)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Connection]:
        """A write: its turn in the queue, then one transaction, committed at the end of the
        block (rolled back if it raises)."""
        turn = self.queue.turn(self.urgent) if self.queue else contextlib.nullcontext()
        with turn, self.engine.begin() as connection:
            if self.queue is not None:
                # The engine with no event listeners (see `_writer`), its BEGIN our own.
                _begin_immediate(connection)
            yield connection

    def read(self) -> Connection:
        """A connection for reads: readers never queue (WAL on SQLite)."""
        return self.engine.connect()

    def close(self) -> None:
        self.engine.dispose()


class Repository:
    """One concern of the store, over the `Database` it shares with the others."""

    def __init__(self, db: Database) -> None:
        self._db = db
