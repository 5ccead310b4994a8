"""Where context logs live (SPEC §6): one `Store` interface, chosen by `DATABASE_URL`."""

from __future__ import annotations

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from context.storage.base import (
    EntryMeta,
    ImageRef,
    Pending,
    Store,
    ThreadKey,
    ThreadMessage,
    ThreadSummary,
)

__all__ = [
    "DEFAULT_URL",
    "EntryMeta",
    "ImageRef",
    "Pending",
    "Store",
    "ThreadKey",
    "ThreadMessage",
    "ThreadSummary",
    "database_url",
    "open_store",
]

DEFAULT_URL = "sqlite:///assistant.db"

# Each accepted scheme and the SQLAlchemy driver it runs on: only drivers this project ships.
_DRIVERS = {
    "sqlite": "sqlite",
    "sqlite+pysqlite": "sqlite",
    "postgres": "postgresql+psycopg",
    "postgresql": "postgresql+psycopg",
    "postgresql+psycopg": "postgresql+psycopg",
}


def database_url(url: str | None) -> URL:
    """The SQLAlchemy URL for a `DATABASE_URL`; ValueError (never showing a password) if the
    store cannot use it."""
    try:
        parsed = make_url(url or DEFAULT_URL)
    except ArgumentError:
        raise ValueError(
            "DATABASE_URL is not a database URL; expected e.g. sqlite:///assistant.db "
            "or postgresql://user@host/dbname"
        ) from None
    driver = _DRIVERS.get(parsed.drivername)
    if driver is None:
        raise ValueError(
            f"DATABASE_URL scheme {parsed.drivername!r} is not supported "
            f"({parsed.render_as_string(hide_password=True)}); "
            "use sqlite:///FILE or postgresql://USER@HOST/DBNAME"
        )
    return parsed.set(drivername=driver)


def open_store(url: str | None = None) -> Store:
    """Open the store at `url` (default: SQLite file `assistant.db` in the working directory),
    migrating its schema to the latest version."""
    from context.storage.sql import SqlStore  # SQLAlchemy engines and Alembic load on use

    return SqlStore(database_url(url))
