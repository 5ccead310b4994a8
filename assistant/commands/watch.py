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
from assistant.commands.threads import _store
from context.entry import Entry
from context.storage import ThreadKey
from context.trace import TraceWriter

POLL_SECONDS = 0.2


def first_shown(entries: Sequence[Entry], start: int) -> int:
    """The index `--from` names: as given, or counted from the end when negative."""
    return start if start >= 0 else max(0, len(entries) + start)


def show_thread(key: ThreadKey, start: int, follow: bool, out: TextIO = sys.stdout) -> int:
    with _store("show") as store:
        if not store.has_thread(key):
            raise CliError(f"no thread {key} in the store (see `assistant threads`)")
        entries = store.entries(key)
        first = first_shown(entries, start)
        trace = TraceWriter(out)
        for entry in entries[first:]:
            trace.write(entry)
        if not follow:
            return 0
        following = max(len(entries), first)
        failing = False
        while True:  # until Ctrl-C
            time.sleep(POLL_SECONDS)
            try:
                new = store.entries(key, following)
            except SQLAlchemyError as exc:
                # A database restart or a network blip must not end a watch at 3 a.m.: say
                # so once, and keep asking.
                if not failing:
                    reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
                    print(
                        f"assistant show: cannot read the store ({reason}); retrying",
                        file=sys.stderr,
                        flush=True,
                    )
                failing = True
                continue
            if failing:
                print("assistant show: the store can be read again", file=sys.stderr, flush=True)
                failing = False
            for entry in new:
                trace.write(entry)
                following = entry.index + 1
