"""The store a command reads: the one DATABASE_URL names, opened only if it is there."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError

from assistant.commands import CliError
from assistant.settings.environment import SettingsError, load_store_settings
from context.storage import (
    Store,
    StoreUnavailable,
    database_url,
    has_store,
    open_store,
    store_error,
)
from context.urls import shown_url


@contextmanager
def existing_store(command: str) -> Iterator[Store]:
    """The store DATABASE_URL names, said on stderr (`shown_url`); never a new one."""
    with _store(command, required=True) as store:
        assert store is not None
        yield store


@contextmanager
def store_if_any(command: str) -> Iterator[Store | None]:
    """As `existing_store`, but None (said on stderr) when DATABASE_URL names no store yet:
    for a command that keeps something there when it can (`assistant eval`'s runs)."""
    with _store(command, required=False) as store:
        yield store


@contextmanager
def _store(command: str, required: bool) -> Iterator[Store | None]:
    try:
        url = database_url(load_store_settings().database_url)
    except SettingsError as exc:
        raise CliError(str(exc)) from None
    url = _absolute(url)
    where = shown_url(url)
    try:
        missing = not has_store(url)
        store = None if missing else open_store(url.render_as_string(hide_password=False))
    except SQLAlchemyError as exc:
        raise CliError(f"cannot open the store at {where}: {store_error(exc)}") from None
    except StoreUnavailable as exc:
        raise CliError(str(exc)) from None
    if store is None and required:
        raise CliError(f"no store at {where} (check DATABASE_URL)")
    if store is None:
        print(f"assistant {command}: no store at {where}: nothing kept there", file=sys.stderr)
        yield None
        return
    print(f"assistant {command}: store {where}", file=sys.stderr, flush=True)
    try:
        yield store
    except SQLAlchemyError as exc:
        # The database failed under the command (a lost server, a full disk, a trigger): one
        # line, and the write it was making rolled back whole.
        raise CliError(f"the store at {where} failed: {store_error(exc)}") from None
    finally:
        store.close()


def _absolute(url: URL) -> URL:
    """A SQLite URL with its file's absolute path, as it is opened from here."""
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return url
    return url.set(database=str(Path(url.database).absolute()))
