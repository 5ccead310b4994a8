"""Installations and OAuth states for installs to many workspaces (docs/slack-setup.md,
"Distributing the app"): slack-sdk's own SQLAlchemy stores, on the database of the logs (its tables
made by the migration 0012_oauth), for Bolt's asyncio OAuth flow.

slack-sdk's asyncio stores want an asyncio engine (a driver of their own for each backend);
its other stores take the store's engine, with SQLite's pragmas and write lock. Bolt's asyncio
flow calls the asyncio methods: here they are the same methods, run off the event loop, as
the store's own calls are."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from slack_sdk.oauth.installation_store import Bot, Installation
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.sqlalchemy_utils import normalize_datetime_for_db
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore
from sqlalchemy import MetaData, distinct, func, select

from context.storage import Store

STATE_SECONDS = 600  # an install must come back from Slack within this (Bolt's default)
# Installs under way at once (states issued and not yet used or expired), across processes:
# anyone may open the install page, and each visit writes a state, so the table and the
# database's writes stay bounded (docs/slack-setup.md, "Distributing the app").
MAX_LIVE_STATES = 100


class Installations(SQLAlchemyInstallationStore, AsyncInstallationStore):
    """slack-sdk's SQLAlchemy installation store; its asyncio methods are its own, in a
    thread."""

    def __init__(self, store: Store, client_id: str) -> None:
        super().__init__(client_id, store.oauth_engine())

    @contextlib.asynccontextmanager
    async def refreshing(self, team: str) -> AsyncIterator[None]:
        """Held while `team`'s token is read, refreshed and saved, by one process at a time:
        Slack takes a refresh token once, so a second refresh of the same one is refused.
        On PostgreSQL, an advisory lock of the database, let go when its transaction ends
        (with the process, if it dies). A SQLite file is served by one process
        (`assistant serve`), whose own lock (`Workspaces`) is enough: SQLite's write lock
        would also shut out the save made under it, on another connection."""
        if self.engine.dialect.name != "postgresql":
            yield
            return
        name = f"slack token refresh {self.client_id} {team}".encode()
        key = int.from_bytes(hashlib.blake2b(name, digest_size=8).digest(), "big", signed=True)
        connection = await asyncio.to_thread(self.engine.connect)
        try:
            await asyncio.to_thread(connection.execute, select(func.pg_advisory_xact_lock(key)))
            yield
        finally:
            await asyncio.to_thread(connection.close)  # its rollback lets the lock go

    async def async_save(self, installation: Installation) -> None:
        await asyncio.to_thread(self.save, installation)

    async def async_save_bot(self, bot: Bot) -> None:
        await asyncio.to_thread(self.save_bot, bot)

    async def async_find_bot(self, **where: Any) -> Bot | None:
        return await asyncio.to_thread(lambda: self.find_bot(**where))

    async def async_find_installation(self, **where: Any) -> Installation | None:
        return await asyncio.to_thread(lambda: self.find_installation(**where))

    async def async_delete_bot(self, **where: Any) -> None:
        await asyncio.to_thread(lambda: self.delete_bot(**where))

    async def async_delete_installation(self, **where: Any) -> None:
        await asyncio.to_thread(lambda: self.delete_installation(**where))

    async def async_delete_all(self, **where: Any) -> None:
        await asyncio.to_thread(lambda: self.delete_all(**where))


def installed_workspaces(store: Store) -> int:
    """How many workspaces the database holds an installation of (through OAuth)."""
    table = SQLAlchemyInstallationStore.default_bots_table_name
    bots = SQLAlchemyInstallationStore.build_bots_table(MetaData(), table)
    with store.oauth_engine().connect() as connection:
        return connection.execute(select(func.count(distinct(bots.c.team_id)))).scalar_one()


class OAuthStates(SQLAlchemyOAuthStateStore, AsyncOAuthStateStore):
    """slack-sdk's SQLAlchemy state store: each state used once, expiring after
    `STATE_SECONDS`; Bolt ties it to the browser that asked with its state cookie."""

    def __init__(self, store: Store) -> None:
        super().__init__(STATE_SECONDS, store.oauth_engine())

    def issue(self, *args: Any, **kwargs: Any) -> str:
        # slack-sdk deletes a state when it is used, never when it expires: here, at the next.
        states = self.oauth_states
        with self.engine.begin() as connection:
            connection.execute(states.delete().where(states.c.expire_at <= _now()))
        return super().issue(*args, **kwargs)

    def full(self) -> bool:
        """Whether `MAX_LIVE_STATES` installs are under way: no new one until some end."""
        states = self.oauth_states
        live = select(func.count()).select_from(states).where(states.c.expire_at > _now())
        with self.engine.connect() as connection:
            return connection.execute(live).scalar_one() >= MAX_LIVE_STATES

    async def async_full(self) -> bool:
        return await asyncio.to_thread(self.full)

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        return await asyncio.to_thread(self.issue, *args, **kwargs)

    async def async_consume(self, state: str) -> bool:
        return await asyncio.to_thread(self.consume, state)


def _now() -> datetime:
    """Now, as slack-sdk writes a state's `expire_at`."""
    now = normalize_datetime_for_db(datetime.now(tz=UTC))
    assert now is not None  # None only for a None given
    return now
