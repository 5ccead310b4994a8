"""The tick: the routines due now, each claimed in the database before it starts, so that one
tick runs once whatever the processes ticking and however often they restart. The clock is
given (tests drive time; production reads the system's)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from context.storage import Routine, RoutineStore
from context.storage.schedule import ScheduleError, as_moment, stored
from context.storage.tables import moment

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]
Start = Callable[[Routine], Awaitable[None]]


def system_clock() -> datetime:
    return datetime.now(UTC)


class RoutineTicker:
    def __init__(self, store: RoutineStore, clock: Clock = system_clock, batch: int = 100) -> None:
        self._store = store
        self._clock = clock
        self._batch = batch

    def claim_due(self) -> list[Routine]:
        """The due routines this process won, each moved on to its next tick. The next tick
        is the first after now, not after the one missed: after downtime, the ticks missed
        make one catch-up run, not one each."""
        at = self._clock()
        won = []
        for routine in self._store.due_routines(moment(at), self._batch):
            try:
                following = stored(routine.cron, routine.tz, routine.at).next_after(at)
            except (ScheduleError, ValueError, KeyError) as exc:
                # A row written by hand or by an older croniter: pausing it says why, where
                # running it again every tick would fail the same way.
                self._store.pause_routine(routine.id, f"its schedule cannot be read: {exc}")
                continue
            if self._store.claim_routine(routine, as_moment(following), moment(at)):
                won.append(routine)
        return won

    async def run(self, every: float, stopping: asyncio.Event, start: Start) -> None:
        """Ticks every `every` seconds until `stopping` is set (at once, not at the next
        tick); a tick that fails (the database away) is logged and the next one tried."""
        while not stopping.is_set():
            try:
                claimed = await asyncio.to_thread(self.claim_due)
            except Exception:
                log.exception("routines: the tick failed; trying again in %s s", every)
                claimed = []
            for routine in claimed:
                await start(routine)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), every)
