"""Times the store commands take: `purge --older-than DAYS`, `threads --since WHEN`.

Each is checked when parsed: a value the store cannot compare against (a time before year 1
or after 9999 in UTC, or too large to count back) is a usage error, never a query that
matches the wrong threads or an OverflowError."""

from __future__ import annotations

import argparse
import math
import re
from datetime import UTC, datetime, timedelta

from context.storage.tables import moment

_AGO = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def ago(amount: float, unit: str = "days") -> datetime:
    """Now minus `amount` `unit`s, in UTC; ValueError when that is no time the store keeps."""
    try:
        at = datetime.now(UTC) - timedelta(**{unit: amount})
        moment(at)  # the form the store compares: years 1 to 9999 only
    except OverflowError:
        raise ValueError("that is before year 1") from None
    return at


def days(text: str) -> float:
    """`--older-than`: a positive number of days that counts back to a year 1 or later."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of days: {text!r}") from None
    if not value > 0 or not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"DAYS must be a positive number, not {text!r}")
    try:
        ago(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"DAYS is too large: {text} days ago, {exc}") from None
    return value


def since(text: str) -> datetime:
    """`--since`: a time ago (`90m`, `2h`, `7d`) or an ISO date or time (UTC unless it says),
    from year 1 to 9999 in UTC."""
    given = text.strip()
    span = _AGO.match(given)
    if span:
        try:
            return ago(float(span[1]), _UNITS[span[2]])
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"too long ago: {text!r}, {exc}") from None
    try:
        at = datetime.fromisoformat(given)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a time: {text!r}; use e.g. 2h, 7d, 2025-06-01 or 2025-06-01T09:00:00Z"
        ) from None
    at = at if at.tzinfo else at.replace(tzinfo=UTC)
    try:
        moment(at)
    except OverflowError:
        raise argparse.ArgumentTypeError(
            f"out of range: {text!r} is outside years 1 to 9999 in UTC"
        ) from None
    return at


def shown(at: datetime) -> str:
    """`at` to the second, as the log writes times, with a four-digit year."""
    return moment(at)[:19] + "Z"
