"""The SQL store (SPEC §6): SQLite embedded by default, PostgreSQL for several processes.

Placement is serialized per thread by a row lock on PostgreSQL and by SQLite's single writer
lock, taken at BEGIN IMMEDIATE; the primary key (thread_id, idx) backs it up in the database.
"""

from __future__ import annotations

import contextlib
import copy
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from dataclasses import asdict, fields
from datetime import UTC, datetime, timedelta
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    Engine,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Row,
    Select,
    String,
    Table,
    Text,
    UniqueConstraint,
    bindparam,
    create_engine,
    delete,
    event,
    false,
    func,
    literal,
    or_,
    select,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import URL
from sqlalchemy.sql import ColumnElement

from context.entry import (
    Content,
    Entry,
    Role,
    UserContent,
    entry_from_json,
    make_entry,
    role_of,
)
from context.log import Tail
from context.storage.base import (
    EntryMeta,
    ImageRef,
    Pending,
    ThreadKey,
    ThreadMessage,
    ThreadSummary,
)

MIGRATIONS = Path(__file__).parent / "migrations"
SQLITE_BUSY_TIMEOUT_S = 30.0
# Any fixed number: every process migrating the same PostgreSQL database takes this lock.
MIGRATION_LOCK_KEY = 0x5C0_17E7
_SQLITE_BEGIN = "sqlite_begin"

metadata = MetaData()

threads_table = Table(
    "threads",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("team", String, nullable=False),
    Column("channel", String, nullable=False),
    Column("thread_ts", String, nullable=False),
    # Microsecond UTC text (see `_now`): sorts as it reads, on every backend.
    Column("created_at", String, nullable=False),
    Column("updated_at", String, nullable=False),
    # The tail of the log, so that an append reads one row instead of every entry.
    Column("next_index", Integer, nullable=False, server_default="0"),
    Column("turn", Integer, nullable=False, server_default="0"),
    Column("last_speaker", String),
    # Whether thread_messages holds the whole Slack thread (fetched from Slack once).
    Column("history_complete", Boolean, nullable=False, server_default=false()),
    # Runs (migration 0003): entries up to this index are answered; the lease of the process
    # running the thread now, if any, and until when (a `_now` string).
    Column("answered_through", Integer, nullable=False, server_default="-1"),
    Column("run_holder", String),
    Column("run_expires", String),
    UniqueConstraint("team", "channel", "thread_ts", name="uq_threads_key"),
)

thread_messages_table = Table(
    "thread_messages",
    metadata,
    Column(
        "thread_id",
        Integer,
        ForeignKey("threads.id", name="fk_thread_messages_thread"),
        nullable=False,
    ),
    Column("ts", String, nullable=False),
    Column("user", String, nullable=False),
    Column("text", Text, nullable=False),
    PrimaryKeyConstraint("thread_id", "ts", name="pk_thread_messages"),
)

entries_table = Table(
    "entries",
    metadata,
    Column(
        "thread_id", Integer, ForeignKey("threads.id", name="fk_entries_thread"), nullable=False
    ),
    Column("idx", Integer, nullable=False),
    Column("role", String, nullable=False),
    Column("turn", Integer, nullable=False),
    Column("timestamp", String, nullable=False),
    Column("content_json", Text, nullable=False),
    Column("slack_ts", String),
    Column("event_id", String),
    Column("model", String),
    Column("prompt_tokens", Integer),
    Column("cached_tokens", Integer),
    Column("completion_tokens", Integer),
    Column("latency_ms", Float),
    Column("recorded_at", String, nullable=False),
    Column("wants_answer", Boolean, nullable=False, server_default=false()),
    PrimaryKeyConstraint("thread_id", "idx", name="pk_entries"),
)
Index(
    "ix_entries_wants_answer",
    entries_table.c.thread_id,
    entries_table.c.idx,
    postgresql_where=entries_table.c.wants_answer,
    sqlite_where=entries_table.c.wants_answer,
)
Index(
    "ix_entries_thread_slack_ts",
    entries_table.c.thread_id,
    entries_table.c.slack_ts,
    postgresql_where=entries_table.c.slack_ts.isnot(None),
    sqlite_where=entries_table.c.slack_ts.isnot(None),
)
Index(
    "ux_entries_thread_event",
    entries_table.c.thread_id,
    entries_table.c.event_id,
    unique=True,
    postgresql_where=entries_table.c.event_id.isnot(None),
    sqlite_where=entries_table.c.event_id.isnot(None),
)

entry_images_table = Table(
    "entry_images",
    metadata,
    Column(
        "thread_id",
        Integer,
        ForeignKey("threads.id", name="fk_entry_images_thread"),
        nullable=False,
    ),
    Column("idx", Integer, nullable=False),
    Column("position", Integer, nullable=False),
    Column("file_id", String, nullable=False),
    Column("name", String, nullable=False),
    Column("mimetype", String, nullable=False),
    Column("size", Integer, nullable=False),
    Column("url", Text, nullable=False),
    PrimaryKeyConstraint("thread_id", "idx", "position", name="pk_entry_images"),
)

_META_COLUMNS = [entries_table.c[field.name] for field in fields(EntryMeta)]
_TOKEN_COLUMNS = ("prompt_tokens", "cached_tokens", "completion_tokens")


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


def create_store_engine(url: str | URL) -> Engine:
    engine = create_engine(url, hide_parameters=True)  # parameters are message text: never logged
    if engine.dialect.name == "sqlite":
        _take_over_sqlite_transactions(engine)
    return engine


def _take_over_sqlite_transactions(engine: Engine) -> None:
    """SQLAlchemy's documented pysqlite recipe: sqlite3's own BEGIN comes late (at the first
    write) and deferred, so SQLAlchemy emits it instead. Writers BEGIN IMMEDIATE: they hold the
    write lock before they read a tail, so two never place an entry at the same index."""

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record) -> None:
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

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        connection.exec_driver_sql(connection.get_execution_options().get(_SQLITE_BEGIN, "BEGIN"))


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


def _writer(engine: Engine) -> Engine:
    return engine.execution_options(**{_SQLITE_BEGIN: "BEGIN IMMEDIATE"})


class SqlStore:
    """`Store` over SQLAlchemy Core; the schema is migrated to head when it opens."""

    def __init__(self, url: str | URL) -> None:
        self._engine = create_store_engine(url)
        self._writes = _writer(self._engine)
        one_writer = self._engine.dialect.name == "sqlite"
        self._write_lock: WriteQueue | None = WriteQueue() if one_writer else None
        self._urgent = False
        try:
            migrate(self._engine)
        except BaseException:
            self._engine.dispose()
            raise
        insert = postgresql.insert if self._engine.dialect.name == "postgresql" else sqlite.insert
        self._insert_thread = insert(threads_table).on_conflict_do_nothing(
            index_elements=["team", "channel", "thread_ts"]
        )
        upsert = insert(thread_messages_table)
        self._upsert_message = upsert.on_conflict_do_update(
            index_elements=["thread_id", "ts"],
            set_={"user": upsert.excluded.user, "text": upsert.excluded.text},
        )

    def urgent(self) -> SqlStore:
        """This store, its writes served first: for whoever has someone waiting (Slack,
        for the acknowledgement of an event). Same database, same connections."""
        view = copy.copy(self)
        view._urgent = True
        return view

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[Connection]:
        queue = self._write_lock
        turn = queue.turn(self._urgent) if queue else contextlib.nullcontext()
        with turn, self._writes.begin() as connection:
            yield connection

    def append(
        self,
        key: ThreadKey,
        content: Content,
        timestamp: str,
        meta: EntryMeta | None = None,
        expect_index: int | None = None,
        answered_through: int | None = None,
        images: Sequence[ImageRef] = (),
    ) -> Entry | None:
        meta = meta or EntryMeta()
        role = role_of(content)
        with self._transaction() as connection:
            thread = self._lock_thread(connection, key)
            if expect_index is not None and thread.next_index != expect_index:
                return None
            if _already_recorded(connection, thread.id, role, meta):
                return None
            tail = Tail(thread.next_index, thread.turn, thread.last_speaker)
            entry, tail = _insert(connection, thread.id, tail, content, timestamp, meta, images)
            done = max(thread.answered_through, answered_through or -1)
            _save_tail(connection, thread.id, tail, answered_through=done)
        return entry

    def record_message(
        self,
        key: ThreadKey,
        content: UserContent,
        timestamp: str,
        meta: EntryMeta,
        instructions: tuple[str, str],
        copy: ThreadMessage,
        images: Sequence[ImageRef] = (),
    ) -> list[Entry]:
        with self._transaction() as connection:
            thread = self._lock_thread(connection, key)
            if _already_recorded(connection, thread.id, "user", meta):
                return []
            tail = Tail(thread.next_index, thread.turn, thread.last_speaker)
            recorded = []
            if thread.next_index == 0:
                text, opened_at = instructions
                first, tail = _insert(connection, thread.id, tail, text, opened_at, EntryMeta())
                recorded.append(first)
            entry, tail = _insert(connection, thread.id, tail, content, timestamp, meta, images)
            recorded.append(entry)
            connection.execute(self._upsert_message, {"thread_id": thread.id, **asdict(copy)})
            _save_tail(connection, thread.id, tail, answered_through=thread.answered_through)
        return recorded

    def _lock_thread(self, connection: Connection, key: ThreadKey) -> Row:
        names = {"team": key.team, "channel": key.channel, "thread_ts": key.thread_ts}
        # FOR UPDATE on PostgreSQL; SQLite renders none, BEGIN IMMEDIATE already locked it all.
        thread = connection.execute(_LOCK_THREAD, names).first()
        if thread is None:
            now = _now()
            connection.execute(
                self._insert_thread, {**names, "created_at": now, "updated_at": now}
            )
            thread = connection.execute(_LOCK_THREAD, names).one()
        return thread

    def entries(self, key: ThreadKey, start: int = 0) -> list[Entry]:
        names = {"team": key.team, "channel": key.channel, "thread_ts": key.thread_ts}
        with self._engine.connect() as connection:
            rows = connection.scalars(_ENTRIES_FROM, {**names, "start": start})
            return [entry_from_json(text) for text in rows]

    def claim(self, key: ThreadKey, holder: str, seconds: float) -> bool:
        now = datetime.now(UTC)
        with self._transaction() as connection:
            done = connection.execute(
                threads_table.update()
                .where(
                    _is_thread(key),
                    or_(
                        threads_table.c.run_holder.is_(None),
                        threads_table.c.run_holder == holder,
                        threads_table.c.run_expires < _moment(now),
                    ),
                )
                .values(run_holder=holder, run_expires=_moment(now + timedelta(seconds=seconds)))
            )
            return done.rowcount == 1

    def release(self, key: ThreadKey, holder: str) -> bool:
        with self._transaction() as connection:
            connection.execute(
                threads_table.update()
                .where(_is_thread(key), threads_table.c.run_holder == holder)
                .values(run_holder=None, run_expires=None)
            )
            return connection.execute(self._pending(key).limit(1)).first() is not None

    def mark_answered(self, key: ThreadKey, through: int) -> None:
        with self._transaction() as connection:
            connection.execute(
                threads_table.update()
                .where(_is_thread(key), threads_table.c.answered_through < through)
                .values(answered_through=through)
            )

    def pending(self, key: ThreadKey) -> list[Pending]:
        with self._engine.connect() as connection:
            rows = connection.execute(self._pending(key))
            return [Pending(row.idx, row.slack_ts) for row in rows]

    @staticmethod
    def _pending(key: ThreadKey) -> Select[tuple[int, str | None]]:
        return (
            select(entries_table.c.idx, entries_table.c.slack_ts)
            .join(threads_table)
            .where(
                _is_thread(key),
                entries_table.c.wants_answer,
                entries_table.c.idx > threads_table.c.answered_through,
            )
            .order_by(entries_table.c.idx)
        )

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
        free = or_(threads_table.c.run_holder.is_(None), threads_table.c.run_expires < _now())
        query = (
            select(threads_table.c.team, threads_table.c.channel, threads_table.c.thread_ts)
            .where(owed, free)
            .order_by(threads_table.c.updated_at)
        )
        with self._engine.connect() as connection:
            return [ThreadKey(*row) for row in connection.execute(query)]

    def mark_posted(
        self, key: ThreadKey, index: int, slack_ts: str, messages: Sequence[ThreadMessage] = ()
    ) -> None:
        with self._transaction() as connection:
            thread_id = connection.scalar(select(threads_table.c.id).where(_is_thread(key)))
            if thread_id is None:
                return
            connection.execute(
                entries_table.update()
                .where(entries_table.c.thread_id == thread_id, entries_table.c.idx == index)
                .values(slack_ts=slack_ts)
            )
            if messages:
                connection.execute(
                    self._upsert_message,
                    [{"thread_id": thread_id, **asdict(m)} for m in messages],
                )

    def recent_images(self, key: ThreadKey, limit: int) -> list[tuple[int, ImageRef]]:
        columns = [entry_images_table.c[f.name] for f in fields(ImageRef)]
        query = (
            select(entry_images_table.c.idx, *columns)
            .join(threads_table)
            .where(_is_thread(key))
            .order_by(entry_images_table.c.idx.desc(), entry_images_table.c.position.desc())
            .limit(limit)
        )
        with self._engine.connect() as connection:
            rows = connection.execute(query).all()
        return [(row.idx, ImageRef(*row[1:])) for row in reversed(rows)]

    def metadata(self, key: ThreadKey, start: int = 0) -> list[EntryMeta]:
        query = (
            select(*_META_COLUMNS)
            .join(threads_table)
            .where(_is_thread(key), entries_table.c.idx >= start)
            .order_by(entries_table.c.idx)
        )
        with self._engine.connect() as connection:
            return [EntryMeta(**row._mapping) for row in connection.execute(query)]

    def has_thread(self, key: ThreadKey) -> bool:
        with self._engine.connect() as connection:
            return connection.scalar(select(threads_table.c.id).where(_is_thread(key))) is not None

    def has_message(self, key: ThreadKey, slack_ts: str) -> bool:
        query = (
            select(literal(1))
            .select_from(entries_table.join(threads_table))
            .where(
                _is_thread(key),
                entries_table.c.role == "user",
                entries_table.c.slack_ts == slack_ts,
            )
            .limit(1)
        )
        with self._engine.connect() as connection:
            return connection.execute(query).first() is not None

    def remember_messages(
        self, key: ThreadKey, messages: list[ThreadMessage], complete: bool = False
    ) -> None:
        with self._transaction() as connection:
            thread_id = connection.scalar(select(threads_table.c.id).where(_is_thread(key)))
            if thread_id is None:
                return
            if messages:
                connection.execute(
                    self._upsert_message,
                    [{"thread_id": thread_id, **asdict(m)} for m in messages],
                )
            if complete:
                connection.execute(
                    threads_table.update()
                    .where(threads_table.c.id == thread_id)
                    .values(history_complete=True)
                )

    def forget_message(self, key: ThreadKey, ts: str) -> None:
        thread_id = select(threads_table.c.id).where(_is_thread(key)).scalar_subquery()
        with self._transaction() as connection:
            connection.execute(
                delete(thread_messages_table).where(
                    thread_messages_table.c.thread_id == thread_id,
                    thread_messages_table.c.ts == ts,
                )
            )

    def thread_messages(self, key: ThreadKey) -> tuple[list[ThreadMessage], bool]:
        with self._engine.connect() as connection:
            thread = connection.execute(
                select(threads_table.c.id, threads_table.c.history_complete).where(_is_thread(key))
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

    def threads(self) -> list[ThreadSummary]:
        totals = (
            select(
                entries_table.c.thread_id,
                *(func.sum(entries_table.c[name]).label(name) for name in _TOKEN_COLUMNS),
            )
            .group_by(entries_table.c.thread_id)
            .subquery()
        )
        query = (
            select(
                threads_table,
                *(func.coalesce(totals.c[name], 0).label(name) for name in _TOKEN_COLUMNS),
            )
            .outerjoin(totals, totals.c.thread_id == threads_table.c.id)
            .order_by(threads_table.c.updated_at.desc(), threads_table.c.id.desc())
        )
        with self._engine.connect() as connection:
            return [
                ThreadSummary(
                    key=ThreadKey(row.team, row.channel, row.thread_ts),
                    entries=row.next_index,
                    created_at=_whole_seconds(row.created_at),
                    updated_at=_whole_seconds(row.updated_at),
                    prompt_tokens=row.prompt_tokens,
                    cached_tokens=row.cached_tokens,
                    completion_tokens=row.completion_tokens,
                )
                for row in connection.execute(query)
            ]

    def purge(self, updated_before: datetime, dry_run: bool = False) -> list[ThreadKey]:
        cutoff = _moment(updated_before)
        with self._transaction() as connection:
            # Locked, so that no append slips into a thread while it is being deleted.
            rows = connection.execute(
                select(threads_table.c.id, threads_table.c.team, threads_table.c.channel,
                       threads_table.c.thread_ts)
                .where(threads_table.c.updated_at < cutoff)
                .order_by(threads_table.c.updated_at)
                .with_for_update()
            ).all()
            ids = [row.id for row in rows]
            if ids and not dry_run:
                for table in (entries_table, thread_messages_table, entry_images_table):
                    connection.execute(table.delete().where(table.c.thread_id.in_(ids)))
                connection.execute(threads_table.delete().where(threads_table.c.id.in_(ids)))
        return [ThreadKey(row.team, row.channel, row.thread_ts) for row in rows]

    def close(self) -> None:
        self._engine.dispose()


def _now() -> str:
    """Finer than the log's whole seconds, so that threads updated within one second still
    list in the order they were updated."""
    return _moment(datetime.now(UTC))


def _moment(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _whole_seconds(moment: str) -> str:
    """The log's timestamp form (2025-04-04T12:33:00Z) of a `_now` value."""
    return moment[:19] + "Z"


# The statements of every append, built once: building and compiling Core statements costs
# several times what SQLite itself takes to run them.
_LOCK_THREAD = (
    select(threads_table)
    .where(
        threads_table.c.team == bindparam("team"),
        threads_table.c.channel == bindparam("channel"),
        threads_table.c.thread_ts == bindparam("thread_ts"),
    )
    .with_for_update()
)
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
_INSERT_ENTRY = entries_table.insert()
_INSERT_IMAGES = entry_images_table.insert()
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


def _insert(
    connection: Connection,
    thread_id: int,
    tail: Tail,
    content: Content,
    timestamp: str,
    meta: EntryMeta,
    images: Sequence[ImageRef] = (),
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
            "recorded_at": _now(),
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
    return entry, after


def _save_tail(connection: Connection, thread_id: int, tail: Tail, answered_through: int) -> None:
    connection.execute(
        _SAVE_TAIL,
        {
            "thread_id": thread_id,
            "next_index": tail.next_index,
            "turn": tail.turn,
            "last_speaker": tail.last_speaker,
            "updated_at": _now(),
            "answered_through": answered_through,
        },
    )


def _is_thread(key: ThreadKey) -> ColumnElement[bool]:
    return (
        (threads_table.c.team == key.team)
        & (threads_table.c.channel == key.channel)
        & (threads_table.c.thread_ts == key.thread_ts)
    )


def _already_recorded(connection: Connection, thread_id: int, role: Role, meta: EntryMeta) -> bool:
    """Slack retries an event with the same event id, and sends a channel mention twice
    (`app_mention` and `message`) with different event ids and the same message ts."""
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
