"""When a routine is due: pure croniter and zoneinfo logic, DST changes included."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from context.storage.schedule import (
    Schedule,
    ScheduleError,
    asked_prompt,
    asked_schedule,
    cron_schedule,
    once_schedule,
    zone,
)


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def test_nine_in_paris_stays_nine_in_paris_across_the_spring_change():
    schedule = cron_schedule("0 9 * * *", "Europe/Paris")
    # 2026-03-29: Paris goes from UTC+1 to UTC+2.
    saturday = schedule.next_after(utc(2026, 3, 27, 12))
    sunday = schedule.next_after(saturday)
    assert (saturday, sunday) == (utc(2026, 3, 28, 8), utc(2026, 3, 29, 7))


def test_nine_in_new_york_across_the_autumn_change():
    schedule = cron_schedule("0 9 * * *", "America/New_York")
    # 2026-11-01: New York goes from UTC-4 to UTC-5.
    first = schedule.next_after(utc(2026, 10, 31, 0))
    assert (first, schedule.next_after(first)) == (utc(2026, 10, 31, 13), utc(2026, 11, 1, 14))


def test_the_repeated_hour_of_the_autumn_change_runs_once():
    schedule = cron_schedule("30 1 * * *", "America/New_York")
    first = schedule.next_after(utc(2026, 11, 1, 0))  # 20:00 the day before, local
    following = schedule.next_after(first)
    assert first == utc(2026, 11, 1, 5, 30)  # 01:30 EDT, the first of the two
    assert following.date() == datetime(2026, 11, 2).date()


def test_once_is_due_at_its_time_then_never():
    schedule = once_schedule("2026-12-01T09:00+01:00", utc(2026, 11, 29))
    assert schedule.next_after(utc(2026, 11, 29)) == utc(2026, 12, 1, 8)
    assert schedule.next_after(utc(2026, 12, 1, 8)) is None


@pytest.mark.parametrize(
    "text", ["2026-12-01T09:00", "tomorrow", "2020-01-01T00:00Z", "2026-13-01T00:00Z"]
)
def test_a_time_without_offset_passed_or_not_iso_is_refused(text):
    with pytest.raises(ScheduleError):
        once_schedule(text, utc(2026, 11, 29))


@pytest.mark.parametrize("expression", ["", "* * *", "61 * * * *", "0 9 * * * * * *", "x" * 300])
def test_a_bad_cron_expression_is_refused(expression):
    with pytest.raises(ScheduleError):
        cron_schedule(expression, None)


@pytest.mark.parametrize(
    "name", ["Mars/Olympus", "../../etc/passwd", "/usr/share/zoneinfo/UTC", "", "Europe/Paris\n"]
)
def test_a_zone_that_is_not_iana_is_refused(name):
    with pytest.raises(ScheduleError):
        zone(name)


def test_cron_defaults_to_utc():
    assert cron_schedule("0 9 * * *", None) == Schedule(cron="0 9 * * *", tz="UTC")


def test_an_hour_the_spring_change_skips_runs_once_with_the_next():
    schedule = cron_schedule("0 * * * *", "America/New_York")
    # 2026-03-08: 02:00 local does not exist; 01:00 EST is 06:00Z, 03:00 EDT is 07:00Z.
    ticks = [schedule.next_after(utc(2026, 3, 8, 5, 30))]
    for _ in range(3):
        ticks.append(schedule.next_after(ticks[-1]))
    assert ticks == [utc(2026, 3, 8, 6), utc(2026, 3, 8, 7), utc(2026, 3, 8, 8), utc(2026, 3, 8, 9)]


NOW = datetime(2026, 11, 29, 8, 0, tzinfo=UTC)


def test_an_asked_cron_gives_its_schedule_and_first_tick():
    schedule, first = asked_schedule("0 9 * * *", "Europe/Paris", None, NOW)
    assert (schedule.cron, schedule.tz, schedule.at) == ("0 9 * * *", "Europe/Paris", None)
    assert first == utc(2026, 11, 30, 8)  # strictly after: 09:00 in Paris is now


def test_an_asked_time_is_its_own_first_tick():
    schedule, first = asked_schedule(None, None, "2026-12-01T09:00+01:00", NOW)
    assert schedule.at == first == utc(2026, 12, 1, 8)


@pytest.mark.parametrize(
    ("cron", "tz", "at", "flag", "said"),
    [
        (None, None, None, "", "give one of cron or at"),
        ("0 9 * * *", None, "2026-12-01T09:00Z", "", "give one of cron or at"),
        (None, "Europe/Paris", "2026-12-01T09:00Z", "--", "--tz goes with --cron"),
        (None, "Europe/Paris", "2026-12-01T09:00Z", "", "tz goes with cron (at carries"),
        ("61 9 * * *", None, None, "", "is not a cron expression"),
        ("0 9 * * *", "Mars/Olympus", None, "", "is not an IANA time zone"),
        (None, None, "2026-11-28T09:00Z", "", "has passed"),
    ],
)
def test_an_asked_schedule_that_cannot_be_used_says_why_in_one_line(cron, tz, at, flag, said):
    with pytest.raises(ScheduleError, match=re.escape(said)) as caught:
        asked_schedule(cron, tz, at, NOW, flag)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "said"),
    [("   ", "prompt must be 1 to 4000"), ("a\x00b", "NUL"), ("x" * 4001, "1 to 4000")],
)
def test_an_asked_prompt_that_cannot_be_kept_is_refused(text, said):
    with pytest.raises(ScheduleError, match=said):
        asked_prompt(text)
    assert asked_prompt("  Go.\n") == "Go."
