"""Where context logs live: one `Store` interface, chosen by `DATABASE_URL`
(docs/architecture.md#storage).

The store is split by concern, each with its own Protocol (in `base`) and its own module,
all over one engine and one transaction helper (`engine.Database`):

- `values`: the values kept (ThreadKey, EntryMeta, ...); `base`: the Protocols: `LogStore`,
  `RunStore`, `MessageCopies`, `ImageStore`, `PanelStore`, `ChannelStore`,
  `ModelRefusalStore`, `GrantStore`, `ElicitationStore`, `Housekeeping`, `StopStore`,
  `SpendStore`, `McpConnectionStore`, `EvalRunStore`, `VerdictStore`, `RoutineStore`,
  `MemoryStore`, and
  `Store`, all of them.
- `tables`: the tables (the schema the Alembic migrations build) and row helpers.
- `engine`: the engine (SQLite pragmas, BEGIN IMMEDIATE), migrations, the write queue and
  `Database`, whose `transaction()` is every write.
- `log`, `runs`, `copies`, `images`, `panel`, `channels`, `model_refusals`, `grants`,
  `elicitations`, `housekeeping`, `stops`, `spend`, `mcp_connections`, `eval_runs`, `verdicts`,
  `routines`, `memory`: one repository per concern.
- `store`: `SqlStore`, what `open_store` returns.
- `reads`: `read`, how async code reads the store (on its event loop where reads never wait).
- `thread_rows`: `lock_thread`, a thread's row locked (made if new), where every write of an
  entry starts.

`SqlStore` combines the repositories by inheritance rather than forwarding to them: each
method and its signature is written once, so the whole store cannot drift from its parts,
and a write that spans two concerns stays one transaction because the repositories share
their connection-level helpers (`copies.keep_copies`), not their transactions. Repositories
hold nothing but the shared `Database`, so combining them is safe; a test checks that no two
define the same name.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import create_engine, inspect
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from context.storage.base import (
    ChannelStore,
    ElicitationStore,
    EvalRunStore,
    GrantStore,
    Housekeeping,
    ImageStore,
    LogStore,
    MemoryStore,
    MessageCopies,
    ModelRefusalStore,
    PanelStore,
    RoutineStore,
    RunStore,
    SpendStore,
    StopStore,
    Store,
    VerdictStore,
)
from context.storage.values import (
    Elicitation,
    EntryMeta,
    EvalRunRow,
    Grant,
    ImageRef,
    JudgeCall,
    ModelRefusal,
    Opening,
    OpenStream,
    PanelThread,
    Pending,
    Routine,
    StopRequest,
    ThreadKey,
    ThreadMessage,
    ThreadSummary,
    UsageRow,
    VerdictCount,
    VerdictRow,
    Viewing,
    Vote,
)
from context.urls import shown_url

__all__ = [
    "DEFAULT_URL",
    "ChannelStore",
    "Elicitation",
    "ElicitationStore",
    "EntryMeta",
    "EvalRunRow",
    "EvalRunStore",
    "Grant",
    "GrantStore",
    "Housekeeping",
    "ImageRef",
    "ImageStore",
    "JudgeCall",
    "LogStore",
    "MemoryStore",
    "MessageCopies",
    "ModelRefusal",
    "ModelRefusalStore",
    "OpenStream",
    "Opening",
    "PanelStore",
    "PanelThread",
    "Pending",
    "Routine",
    "RoutineStore",
    "RunStore",
    "SpendStore",
    "StopRequest",
    "StopStore",
    "Store",
    "StoreUnavailable",
    "ThreadKey",
    "ThreadMessage",
    "ThreadSummary",
    "UsageRow",
    "VerdictCount",
    "VerdictRow",
    "VerdictStore",
    "Viewing",
    "Vote",
    "database_url",
    "new_sqlite_file",
    "open_store",
    "remove_sqlite_file",
    "store_error",
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
            f"({shown_url(parsed)}); "
            "use sqlite:///FILE or postgresql://USER@HOST/DBNAME"
        )
    return parsed.set(drivername=driver)


class StoreUnavailable(Exception):
    """The store could not be opened (the server unreachable, a SQLite file in a missing
    directory or not a database, …): one line naming where (`shown_url`)."""


def open_store(url: str | None = None) -> Store:
    """Open the store at `url` (default: SQLite file `assistant.db` in the working directory),
    migrating its schema to the latest version; StoreUnavailable when it cannot be."""
    from context.storage.store import SqlStore  # SQLAlchemy engines and Alembic load on use

    parsed = database_url(url)
    try:
        return SqlStore(parsed)
    except SQLAlchemyError as exc:
        raise StoreUnavailable(
            f"cannot open the store at {shown_url(parsed)}: {store_error(exc)}"
        ) from exc


def new_sqlite_file(url: str | None) -> Path | None:
    """The SQLite file `url` names, when there is none yet: the one opening the store would
    create (None: a server's database, memory, or a file already there)."""
    try:
        parsed = database_url(url)
    except ValueError:
        return None
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    path = Path(parsed.database)
    return None if path.exists() else path


def remove_sqlite_file(path: Path) -> None:
    """A SQLite file and the journal files beside it, as far as they are there."""
    for name in (path, *(path.with_name(path.name + end) for end in ("-wal", "-shm", "-journal"))):
        name.unlink(missing_ok=True)


def has_store(url: URL) -> bool:
    """Whether the database holds a store, found without creating anything: SQLite makes a
    missing file on connecting, and opening a store creates its tables in an empty one.
    StoreUnavailable when the database cannot be asked."""
    if url.get_backend_name() == "sqlite" and (
        not url.database or url.database == ":memory:" or not Path(url.database).is_file()
    ):
        return False
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return inspect(connection).has_table("threads")
    except SQLAlchemyError as exc:
        raise StoreUnavailable(
            f"cannot open the store at {shown_url(url)}: {store_error(exc)}"
        ) from exc
    finally:
        engine.dispose()


def store_error(exc: SQLAlchemyError) -> str:
    """A database error's first line: the driver's words, without SQLAlchemy's statement and
    parameters (which would be message text)."""
    lines = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
