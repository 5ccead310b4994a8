"""The routines' promises (`RoutineStore`), kept apart from `base.py`'s log concerns."""

from __future__ import annotations

from typing import Protocol

from context.storage.values import Routine


class RoutineStore(Protocol):
    """Routines: kept, listed, found due, claimed once per tick across processes."""

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
    ) -> Routine: ...

    def routine(self, routine_id: int) -> Routine | None: ...

    def routines(self, team: str | None = None) -> list[Routine]:
        """Every routine (of `team`), by workspace, channel and id."""
        ...

    def due_routines(self, at: str, limit: int = 100) -> list[Routine]:
        """The routines not paused whose next_due is at or before `at`, soonest first."""
        ...

    def claim_routine(self, routine: Routine, next_due: str | None, at: str) -> bool:
        """Moves `routine` from the tick it was due (`routine.next_due`) to `next_due`; True
        for exactly one claimer of that tick, whatever the processes."""
        ...

    def routine_ran(
        self, routine_id: int, thread_ts: str | None, outcome: str, ok: bool, pause_after: int
    ) -> Routine | None: ...

    def pause_routine(self, routine_id: int, reason: str) -> bool: ...

    def resume_routine(self, routine_id: int, next_due: str | None) -> bool: ...

    def set_routine_due(self, routine_id: int, next_due: str) -> bool: ...

    def delete_routine(self, routine_id: int) -> bool: ...
