"""When a routine is due: pure logic over croniter and zoneinfo, no I/O, no clock of its own
(every function is given the time it reasons from)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterBadCronError, CroniterBadDateError, croniter

from context.storage.tables import MOMENT, moment

MAX_PROMPT = 4000  # characters: a routine's prompt is one message, not a document
_MAX_CRON = 200  # characters: five or six fields; longer is not a schedule


class ScheduleError(ValueError):
    """A schedule that cannot be used: its one line says why."""


@dataclass(frozen=True)
class Schedule:
    """A cron expression in an IANA zone, or one time (UTC)."""

    cron: str | None = None
    tz: str | None = None
    at: datetime | None = None

    def next_after(self, after: datetime) -> datetime | None:
        """The first tick strictly after `after` (UTC); None once a one-time schedule's time
        has passed. Cron ticks are read in the zone, so "0 9 * * *" in Europe/Paris stays
        09:00 there across a DST change (08:00 UTC in winter, 07:00 UTC in summer)."""
        if self.at is not None:
            return self.at if self.at > after else None
        assert self.cron is not None
        zone = ZoneInfo(self.tz or "UTC")
        # On wall-clock times, each at most once: croniter on aware times runs 01:30 twice
        # the night the clocks go back. A time the clocks skip runs at the same instant as
        # the next hour's (fold 0 reads it with the offset before the change).
        ticks = croniter(self.cron, after.astimezone(zone).replace(tzinfo=None))
        for _ in range(8):
            wall: datetime = ticks.get_next(datetime)
            tick = wall.replace(tzinfo=zone).astimezone(UTC)
            if tick > after:
                return tick
        raise ScheduleError(f"{self.cron!r} in {self.tz} gives no time after {after}")


def cron_schedule(expression: str, tz: str | None) -> Schedule:
    expression = expression.strip()
    if not expression or len(expression) > _MAX_CRON or not expression.isprintable():
        raise ScheduleError("the cron expression must be 1 to 200 printable characters")
    if len(expression.split()) not in (5, 6) or not croniter.is_valid(expression):
        raise ScheduleError(f"{expression!r} is not a cron expression (m h dom mon dow)")
    zone(tz or "UTC")
    schedule = Schedule(cron=expression, tz=tz or "UTC")
    try:
        schedule.next_after(datetime.now(UTC))
    except (CroniterBadCronError, CroniterBadDateError) as exc:
        raise ScheduleError(f"{expression!r} never comes: {exc}") from None
    return schedule


def once_schedule(text: str, after: datetime) -> Schedule:
    """One time, ISO-8601 with its offset (a time with no zone would be read in whatever zone
    the server runs in), after `after`."""
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ScheduleError(f"{text!r} is not an ISO-8601 time (2026-12-01T09:00+01:00)") from None
    if when.tzinfo is None:
        raise ScheduleError(f"{text!r} has no offset: add one (Z, +01:00)")
    when = when.astimezone(UTC)
    if when <= after:
        raise ScheduleError(f"{text!r} has passed")
    return Schedule(at=when)


def asked_prompt(text: str, flag: str = "") -> str:
    """A routine's prompt as kept: its outer blanks dropped, 1 to MAX_PROMPT characters, no NUL
    (the CLI's `--prompt` and the model's `prompt` alike)."""
    prompt = text.strip()
    if not prompt or len(prompt) > MAX_PROMPT:
        raise ScheduleError(f"{flag}prompt must be 1 to {MAX_PROMPT} characters")
    if "\x00" in prompt:
        raise ScheduleError(f"{flag}prompt holds a NUL character")
    return prompt


def asked_schedule(
    cron: str | None, tz: str | None, at: str | None, now: datetime, flag: str = ""
) -> tuple[Schedule, datetime]:
    """The one check of a schedule someone asked for (the CLI's `routines add`, and the
    model's `scheduleRoutine` once it is built): a cron expression in a zone, or one time; the
    schedule and its first tick after `now`. `flag` prefixes the names in errors ("--" for
    the CLI's options) so the one line says where the fault is."""
    if (cron is None) == (at is None):
        raise ScheduleError(f"give one of {flag}cron or {flag}at")
    if cron is not None:
        schedule = cron_schedule(cron, tz)
    else:
        if tz is not None:
            raise ScheduleError(f"{flag}tz goes with {flag}cron ({flag}at carries its own offset)")
        assert at is not None
        schedule = once_schedule(at, now)
    first = schedule.next_after(now)
    # A cron always has a next tick (cron_schedule found one); a time was checked to come.
    assert first is not None
    return schedule, first


def zone(name: str) -> ZoneInfo:
    """The IANA zone `name`; ScheduleError for anything else (a path, an unknown name)."""
    if not name or len(name) > 64 or not all(c.isalnum() or c in "/_+-" for c in name):
        raise ScheduleError(f"{name!r} is not an IANA time zone (e.g. Europe/Paris)")
    if name.startswith("/") or ".." in name:
        raise ScheduleError(f"{name!r} is not an IANA time zone (e.g. Europe/Paris)")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(f"{name!r} is not an IANA time zone (e.g. Europe/Paris)") from None


def stored(routine_cron: str | None, routine_tz: str | None, routine_at: str | None) -> Schedule:
    """The schedule a routine's row holds."""
    if routine_at is not None:
        return Schedule(at=from_moment(routine_at))
    return Schedule(cron=routine_cron, tz=routine_tz)


def from_moment(text: str) -> datetime:
    return datetime.strptime(text, MOMENT).replace(tzinfo=UTC)


def as_moment(when: datetime | None) -> str | None:
    return None if when is None else moment(when)
