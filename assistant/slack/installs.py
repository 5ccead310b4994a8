"""Installations and OAuth states for installs to many workspaces (README "Distributing the
app"): slack-sdk's own SQLAlchemy stores, on the database of the logs (its tables made by the
migration 0012_oauth), for Bolt's asyncio OAuth flow.

slack-sdk's asyncio stores want an asyncio engine (a driver of their own for each backend);
its other stores take the store's engine, with SQLite's pragmas and write lock. Bolt's asyncio
flow calls the asyncio methods: here they are the same methods, run off the event loop, as
the store's own calls are."""

from __future__ import annotations

import asyncio
import logging
import re
from contextvars import ContextVar
from typing import Any

from slack_sdk.oauth.installation_store import Bot, Installation
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore

from context.storage import Store

STATE_SECONDS = 600  # an install must come back from Slack within this (Bolt's default)


class Installations(SQLAlchemyInstallationStore, AsyncInstallationStore):
    """slack-sdk's SQLAlchemy installation store; its asyncio methods are its own, in a
    thread."""

    def __init__(self, store: Store, client_id: str) -> None:
        super().__init__(client_id, store.oauth_engine())

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


class OAuthStates(SQLAlchemyOAuthStateStore, AsyncOAuthStateStore):
    """slack-sdk's SQLAlchemy state store: each state used once, expiring after
    `STATE_SECONDS`; Bolt ties it to the browser that asked with its state cookie."""

    def __init__(self, store: Store) -> None:
        super().__init__(STATE_SECONDS, store.oauth_engine())

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        return await asyncio.to_thread(self.issue, *args, **kwargs)

    async def async_consume(self, state: str) -> bool:
        return await asyncio.to_thread(self.consume, state)


# Bolt's words when a token refresh fails inside a request (slack_bolt/authorization), and the
# line its authorization middleware adds after it.
_ROTATION_FAILED = "Failed to rotate tokens due to "
_NOT_FOUND = "Although the app should be installed into this workspace"
_refused_here: ContextVar[bool] = ContextVar("refresh_refused", default=False)


class _OneLineForARefusedRefresh(logging.Filter):
    """A refresh Slack refuses is, in Bolt's log, a multi-line exception text and then a
    second line about a missing installation: here it is one line saying what Slack said."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message.startswith(_ROTATION_FAILED):
            error = re.search(r"'error': '([^']+)'", message)
            record.msg = "Slack refused to refresh a workspace's bot token (%s): its events are "
            record.msg += "refused until it is installed again"
            record.args = (error.group(1) if error else "no answer",)
            _refused_here.set(True)
            return True
        return not (message.startswith(_NOT_FOUND) and _refused_here.get())


logging.getLogger("slack_bolt.AsyncApp").addFilter(_OneLineForARefusedRefresh())
logging.getLogger("slack_bolt.AsyncMultiTeamsAuthorization").addFilter(_OneLineForARefusedRefresh())
