"""`assistant show TEAM/CHANNEL/THREAD_TS [--follow]`: a stored thread rendered as its trace,
and, with `--follow`, every entry any process records in it afterwards.

Following polls the store (one indexed read every `POLL_SECONDS`) rather than asking the
database to notify: it works the same on SQLite and PostgreSQL, needs nothing of the
processes that record, and an entry shows up within about `POLL_SECONDS` of its commit
(bench/RESULTS.md, `python -m bench follow`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import TextIO

from sqlalchemy.exc import SQLAlchemyError

from assistant.commands import CliError
from assistant.commands.stored import existing_store
from context.entry import Entry
from context.storage import Store, ThreadKey, store_error
from context.trace import TraceWriter

POLL_SECONDS = 0.2


def first_shown(entries: Sequence[Entry], start: int) -> int:
    """The index `--from` names: as given, or counted from the end when negative."""
    return first_shown_of(len(entries), start)


def first_shown_of(count: int, start: int) -> int:
    """`first_shown` of a log of `count` entries."""
    return start if start >= 0 else max(0, count + start)


def show_thread(key: ThreadKey, start: int, follow: bool, out: TextIO) -> int:
    with existing_store("show") as store:
        if not store.has_thread(key):
            raise CliError(f"no thread {key} in the store (see `assistant threads`)")
        started = store.started_at(key)  # before the read: a purge after it is noticed
        entries = store.entries(key)
        first = first_shown(entries, start)
        trace = TraceWriter(out)
        for entry in entries[first:]:
            trace.write(entry)
        if not follow:
            return 0
        _follow(store, key, started, max(len(entries), first), trace)
    return 0


def _say(text: str) -> None:
    print(f"assistant show: {text}", file=sys.stderr, flush=True)


def _follow(
    store: Store, key: ThreadKey, started: str | None, following: int, trace: TraceWriter
) -> None:
    """Print the thread's entries from index `following` as they are recorded, until Ctrl-C.

    A purge deletes the log, and a later message there starts another one under the same
    key, at index 0: the log followed is told by when it was started, checked before and
    after each read, so the new log's entries are never taken for the old one's. The watch
    says the old log was deleted and follows the new one from its entry 0."""
    failing = False
    while True:  # until Ctrl-C
        time.sleep(POLL_SECONDS)
        try:
            now = store.started_at(key)
            if now != started:
                if started is not None:
                    waiting = "; waiting for a new log there" if now is None else ""
                    _say(f"the log of {key} was deleted (purged){waiting}")
                if now is not None:
                    _say(f"a new log was started in {key}; following it from entry 0")
                started, following = now, 0
            if started is None:
                continue
            new = store.entries(key, following)
            if store.started_at(key) != started:
                continue  # purged while read: what was read may be either log's; next poll
        except SQLAlchemyError as exc:
            # A database restart or a network blip must not end a watch at 3 a.m.: say
            # so once, and keep asking.
            if not failing:
                _say(f"cannot read the store ({store_error(exc)}); retrying")
            failing = True
            continue
        if failing:
            _say("the store can be read again")
            failing = False
        for entry in new:
            trace.write(entry)
            following = entry.index + 1
