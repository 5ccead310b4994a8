"""Stops over SQL (`StopStore`): the stop button pressed on a thread's run, kept on the
thread's row until the entry that records the stop raises answered_through past it."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row, func, select

from context.storage.engine import Repository
from context.storage.tables import THREAD, entries_table, is_thread, thread_values, threads_table
from context.storage.values import StopRequest, ThreadKey

_COLUMNS = (
    threads_table.c.answered_through,
    threads_table.c.stop_through,
    threads_table.c.stop_user,
    threads_table.c.stop_at,
    threads_table.c.stop_streams,
)
# Read before every run: built once (see `THREAD`).
_STOP_REQUESTED = select(*_COLUMNS).where(THREAD)


class SqlStops(Repository):
    """`StopStore` over SQL."""

    def request_stop(
        self, key: ThreadKey, user: str, at: str, streams: tuple[str, ...]
    ) -> StopRequest | None:
        with self._db.transaction() as connection:
            row = connection.execute(
                select(threads_table.c.id, *_COLUMNS).where(is_thread(key)).with_for_update()
            ).first()
            if row is None or _pending(row) is not None:
                return None  # a thread never seen, or a stop already on its way
            through = connection.scalar(
                select(func.max(entries_table.c.idx)).where(
                    entries_table.c.thread_id == row.id,
                    entries_table.c.wants_answer,
                    entries_table.c.idx > row.answered_through,
                )
            )
            if through is None:
                return None  # nothing owed: no run to stop
            connection.execute(
                threads_table.update()
                .where(threads_table.c.id == row.id)
                .values(
                    stop_through=through,
                    stop_user=user,
                    stop_at=at,
                    stop_streams=" ".join(streams) or None,
                )
            )
            return StopRequest(user, at, streams, through)

    def stop_requested(self, key: ThreadKey) -> StopRequest | None:
        with self._db.read() as connection:
            row = connection.execute(_STOP_REQUESTED, thread_values(key)).first()
        return None if row is None else _pending(row)


def _pending(row: Row[*tuple[Any, ...]]) -> StopRequest | None:
    if row.stop_through is None or row.stop_through <= row.answered_through:
        return None  # none, or recorded already (its entry raised answered_through)
    streams = tuple((row.stop_streams or "").split())
    return StopRequest(row.stop_user, row.stop_at, streams, row.stop_through)
