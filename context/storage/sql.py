"""The names `context.storage.sql` held before the store was split by concern, for code that
still imports them from here (bench/, tests/test_store.py). New code imports them from the
module that holds them (see the package docstring)."""

from context.storage.engine import (
    MIGRATIONS,
    WriteQueue,
    create_store_engine,
    migrate,
    migration_config,
)
from context.storage.store import SqlStore
from context.storage.tables import metadata

__all__ = [
    "MIGRATIONS",
    "SqlStore",
    "WriteQueue",
    "create_store_engine",
    "metadata",
    "migrate",
    "migration_config",
]
