"""Database errors as a run sees them (docs/architecture.md#scheduling-and-leases): which
may pass (`store_unavailable`: the run stays owed and is resumed), and how each is logged."""

from __future__ import annotations

import logging
import sqlite3
import sys

from sqlalchemy import exc as sa_errors

log = logging.getLogger("assistant.run.scheduling.scheduler")  # where these lines always went

_TRANSIENT = (
    sa_errors.OperationalError,
    sa_errors.DisconnectionError,
    sa_errors.TimeoutError,  # no pooled connection came free in time
    sqlite3.OperationalError,
)


def store_unavailable(exc: BaseException) -> bool:
    """Whether `exc` (or its cause) says the database could not be used just now: a
    connection lost or refused, a server restarting, SQLite locked. Such a run is resumed
    later rather than ended: nothing about the request itself is wrong."""
    error: BaseException | None = exc
    while error is not None:
        if isinstance(error, sa_errors.DBAPIError) and error.connection_invalidated:
            return True
        if isinstance(error, _TRANSIENT):
            return True
        psycopg = sys.modules.get("psycopg")  # loaded with PostgreSQL: only then can it raise
        if psycopg is not None and isinstance(error, psycopg.OperationalError):
            return True
        error = error.__cause__
    return False


def briefly(exc: BaseException) -> str:
    """An error in one line, for the log: the driver's message (never the statement and
    its parameters, which hold people's messages)."""
    orig = getattr(exc, "orig", None) or exc
    first = str(orig).strip().splitlines()
    return f"{type(orig).__name__}: {first[0]}" if first else type(orig).__name__


def log_failure(exc: BaseException, what: str, logger: logging.Logger = log) -> None:
    """One line for a database that could not be used just now; a traceback for the rest."""
    if store_unavailable(exc):
        logger.warning("%s: the database is unavailable (%s)", what, briefly(exc))
    else:
        logger.error("%s", what, exc_info=exc)
