"""Routines over SQL (`RoutineStore`): a prompt a channel is answered on a schedule. The store
keeps the schedule as given and the next time it is due; when that is, `assistant.routines`
works out (croniter, zoneinfo), and hands the store the new time when it claims a tick."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Integer, Row, String, and_, bindparam, false, select

from context.storage.engine import Repository
from context.storage.tables import now, routines_table
from context.storage.values import Routine

_table = routines_table
# The one query each tick makes: the index on next_due answers it (bench/routines_due.py).
_DUE = (
    select(_table)
    .where(_table.c.next_due <= bindparam("at", type_=String), _table.c.paused == false())
    .order_by(_table.c.next_due, _table.c.id)
    .limit(bindparam("limit", type_=Integer))
)


def _routine(row: Row[Any]) -> Routine:
    return Routine(**{name: getattr(row, name) for name in Routine.__dataclass_fields__})


class SqlRoutines(Repository):
    """`RoutineStore` over SQL."""

    def add_routine(
        self,
        team: str,
        channel: str,
        prompt: str,
        creator: str | None,
        *,
        cron: str | None = None,
        tz: str | None = None,
        at: str | None = None,
        next_due: str,
    ) -> Routine:
        values: dict[str, Any] = {
            "team": team,
            "channel": channel,
            "prompt": prompt,
            "creator": creator,
            "cron": cron,
            "tz": tz,
            "at": at,
            "next_due": next_due,
            "created_at": now(),
        }
        with self._db.transaction() as connection:
            routine_id = connection.execute(
                _table.insert().values(**values).returning(_table.c.id)
            ).scalar_one()
        return Routine(id=routine_id, **values)

    def routine(self, routine_id: int) -> Routine | None:
        with self._db.read() as connection:
            row = connection.execute(select(_table).where(_table.c.id == routine_id)).first()
        return None if row is None else _routine(row)

    def routines(self, team: str | None = None) -> list[Routine]:
        query = select(_table).order_by(_table.c.team, _table.c.channel, _table.c.id)
        if team is not None:
            query = query.where(_table.c.team == team)
        with self._db.read() as connection:
            return [_routine(row) for row in connection.execute(query)]

    def due_routines(self, at: str, limit: int = 100) -> list[Routine]:
        with self._db.read() as connection:
            rows = connection.execute(_DUE, {"at": at, "limit": limit})
            return [_routine(row) for row in rows]

    def claim_routine(self, routine: Routine, next_due: str | None, at: str) -> bool:
        """Whether this process won the tick `routine.next_due`: one UPDATE that moves
        next_due on only if nobody moved it first, so two processes (or one after a restart)
        never both run one tick. On PostgreSQL the second UPDATE waits for the first's row
        lock, then finds next_due changed and updates nothing."""
        with self._db.transaction() as connection:
            claimed = connection.execute(
                _table.update()
                .where(
                    and_(
                        _table.c.id == routine.id,
                        _table.c.next_due == routine.next_due,
                        _table.c.paused == false(),
                    )
                )
                .values(next_due=next_due, last_run_at=at, last_outcome="started")
            )
            return claimed.rowcount == 1

    def routine_ran(
        self, routine_id: int, thread_ts: str | None, outcome: str, ok: bool, pause_after: int
    ) -> Routine | None:
        """Records how a run ended; `pause_after` failures in a row pause the routine. The
        routine as it is now (None if deleted meanwhile)."""
        with self._db.transaction() as connection:
            row = connection.execute(
                select(_table.c.failures).where(_table.c.id == routine_id).with_for_update()
            ).first()
            if row is None:
                return None
            failures = 0 if ok else row.failures + 1
            values: dict[str, Any] = {
                "last_thread_ts": thread_ts,
                "last_outcome": outcome,
                "failures": failures,
            }
            if failures >= pause_after:
                values |= {
                    "paused": True,
                    "paused_reason": f"{failures} failed runs in a row (last: {outcome})",
                }
            connection.execute(_table.update().where(_table.c.id == routine_id).values(values))
        return self.routine(routine_id)

    def pause_routine(self, routine_id: int, reason: str) -> bool:
        return self._change(routine_id, paused=True, paused_reason=reason)

    def resume_routine(self, routine_id: int, next_due: str | None) -> bool:
        """Running again from `next_due` (the next tick from now: the ticks missed while it
        was paused are not run), its failures forgotten."""
        return self._change(
            routine_id, paused=False, paused_reason=None, failures=0, next_due=next_due
        )

    def set_routine_due(self, routine_id: int, next_due: str) -> bool:
        return self._change(routine_id, next_due=next_due)

    def delete_routine(self, routine_id: int) -> bool:
        with self._db.transaction() as connection:
            deleted = connection.execute(_table.delete().where(_table.c.id == routine_id))
            return deleted.rowcount == 1

    def _change(self, routine_id: int, **values: Any) -> bool:
        with self._db.transaction() as connection:
            changed = connection.execute(
                _table.update().where(_table.c.id == routine_id).values(values)
            )
            return changed.rowcount == 1
