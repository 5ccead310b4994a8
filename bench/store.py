"""Store appends: p50/p99 latency of `Store.append` on SQLite and on PostgreSQL.

Appends go round-robin over 20 threads with the app's own mix (a user entry carries its Slack
ts and event id, so the store checks for duplicates; tool calls carry model metadata). Then one
thread grows long, to show what depends on a thread's length: a user entry's duplicate check
and `has_message` (both look the message up by Slack ts). PostgreSQL runs in a scratch
database created for the run and dropped after it.

SQLite runs as the app sets it up: WAL journal, synchronous=NORMAL.
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from bench.report import Figure, median, ms, percentile
from bench.step import conversation, stamp
from context.entry import Content, UserContent
from context.storage import EntryMeta, ThreadKey, database_url
from context.storage.store import SqlStore

POSTGRES = os.environ.get("BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
FULL = {"appends": 2_000, "threads": 20, "long": 3_000, "probes": 50}
SMOKE = {"appends": 40, "threads": 4, "long": 60, "probes": 5}
MODEL_META = EntryMeta(model="gpt-4o-mini", prompt_tokens=1500, completion_tokens=40)


class Appender:
    """Appends the app's mix of entries, each with the metadata the app would give it."""

    def __init__(self) -> None:
        self._contents = conversation(seed=3)
        self._serial = 0

    def meta(self, content: Content) -> EntryMeta:
        self._serial += 1
        if isinstance(content, UserContent):
            ts = f"{1_700_000_000 + self._serial}.{self._serial % 1_000_000:06d}"
            return EntryMeta(slack_ts=ts, event_id=f"Ev{self._serial:09d}")
        return MODEL_META if not isinstance(content, str) else EntryMeta()

    def append(self, store: SqlStore, key: ThreadKey) -> tuple[str, float]:
        content = next(self._contents)
        meta = self.meta(content)
        started = time.perf_counter()
        store.append(key, content, stamp(self._serial), meta)
        kind = "user" if isinstance(content, UserContent) else "other"
        return kind, time.perf_counter() - started


def measure(store: SqlStore, label: str, size: dict[str, int]) -> list[Figure]:
    appender = Appender()
    keys = [ThreadKey("T0BENCH", "C0BENCH", f"1700000000.{n:06d}") for n in range(size["threads"])]
    samples: dict[str, list[float]] = {"user": [], "other": []}
    for n in range(size["appends"]):
        kind, seconds = appender.append(store, keys[n % len(keys)])
        samples[kind].append(seconds)
    every = samples["user"] + samples["other"]
    short = probe(store, keys[0], appender, size["probes"])
    for _ in range(size["long"]):
        appender.append(store, keys[0])
    long = probe(store, keys[0], appender, size["probes"])
    entries = len(store.entries(keys[0]))
    return [
        Figure(
            f"{label}: append p50 / p99 ({len(every)} appends, {len(keys)} threads)",
            f"{ms(median(every))} / {ms(percentile(every, 0.99))}",
        ),
        Figure(
            f"{label}: append p50, user entries / tool calls and results",
            f"{ms(median(samples['user']))} / {ms(median(samples['other']))}",
        ),
        Figure(
            f"{label}: user append p50 and has_message p50, thread of "
            f"{short[0]:,} → {entries:,} entries",
            f"{ms(short[1])} → {ms(long[1])}; {ms(short[2])} → {ms(long[2])}",
        ),
    ]


def probe(
    store: SqlStore, key: ThreadKey, appender: Appender, count: int
) -> tuple[int, float, float]:
    """Median user-entry append and has_message at the thread's current length."""
    length = len(store.entries(key))
    appends, lookups = [], []
    for n in range(count):
        ts = f"1600000000.{length + n:06d}"
        content = UserContent(userid="<@U0FAKEUSR1>", text="Is the report ready?")
        meta = EntryMeta(slack_ts=ts, event_id=f"EvProbe{uuid.uuid4().hex[:12]}")
        started = time.perf_counter()
        store.append(key, content, stamp(length), meta)
        appends.append(time.perf_counter() - started)
        started = time.perf_counter()
        store.has_message(key, ts)
        lookups.append(time.perf_counter() - started)
    return length, median(appends), median(lookups)


@contextmanager
def scratch_postgres() -> Iterator[str]:
    server = database_url(POSTGRES)
    admin = create_engine(server, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 5})
    name = f"bench_store_{uuid.uuid4().hex[:12]}"
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            yield server.set(database=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as connection:
                connection.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


def run(smoke: bool = False) -> list[Figure]:
    size = SMOKE if smoke else FULL
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = SqlStore(f"sqlite:///{Path(tmp) / 'app.db'}")
        try:
            figures += measure(store, "SQLite", size)
        finally:
            store.close()
    try:
        with scratch_postgres() as url:
            store = SqlStore(url)
            try:
                figures += measure(store, "PostgreSQL", size)
            finally:
                store.close()
    except OperationalError as exc:
        reason = str(exc.orig).strip().splitlines()[0]
        figures.append(Figure("PostgreSQL", f"not measured: unreachable ({reason})", "runs", False))
    return figures
