"""Each workspace's Web API client: the one place a Slack call's token comes from
(docs/architecture.md#many-workspaces).

With SLACK_BOT_TOKEN, one client serves the one workspace, as it always did. Installed through
OAuth (SLACK_CLIENT_ID), each workspace's bot token is its installation's, read from the
installation store when asked (so an uninstall in another process counts at once), refreshed
as slack-sdk refreshes it when it expires, and each token has a client of its own. A team
without an installation has no client: nothing is called for it."""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Callable
from typing import Generic, TypeVar

from slack_sdk.errors import SlackTokenRotationError
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.token_rotation.async_rotator import AsyncTokenRotator
from slack_sdk.web.async_client import AsyncWebClient

from assistant.slack.client import close_slack_client, create_slack_client

log = logging.getLogger(__name__)

T = TypeVar("T")


class Workspaces:
    """The client of each workspace (by team id)."""

    def __init__(
        self,
        api_base: str,
        single: AsyncWebClient | None = None,
        installations: AsyncInstallationStore | None = None,
        rotator: AsyncTokenRotator | None = None,
        rotate_minutes: int = 120,
    ) -> None:
        """`single`: the one client of SLACK_BOT_TOKEN; else `installations` (and `rotator`,
        for tokens that expire)."""
        assert (single is None) != (installations is None)
        self._api_base = api_base
        self._single = single
        self._installations = installations
        self._rotator = rotator
        self._rotate_minutes = rotate_minutes
        self._clients: dict[str, AsyncWebClient] = {}  # team -> the client of its token now
        self._refused: dict[str, str] = {}  # team -> the token whose refresh Slack refused
        self._retired: list[AsyncWebClient] = []  # replaced by a refreshed token's
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)  # by team
        self._configure: list[Callable[[AsyncWebClient], None]] = []

    def configure_each(self, configure: Callable[[AsyncWebClient], None]) -> None:
        """Apply `configure` to every client: those there are, and each one made later (the
        telemetry's counter of Slack's 429s)."""
        self._configure.append(configure)
        for client in [self._single, *self._clients.values()]:
            if client is not None:
                configure(client)

    async def client(self, team: str) -> AsyncWebClient | None:
        """`team`'s client; None when the app is not installed there (any more)."""
        if self._single is not None:
            return self._single
        assert self._installations is not None
        # One at a time: two runs of a workspace must not both spend its refresh token.
        async with self._locks[team]:
            bot = await self._installations.async_find_bot(enterprise_id=None, team_id=team)
            if bot is None or not bot.bot_token or self._refused.get(team) == bot.bot_token:
                return None
            if self._rotator is not None:
                try:
                    rotated = await self._rotator.perform_bot_token_rotation(
                        bot=bot, minutes_before_expiration=self._rotate_minutes
                    )
                except SlackTokenRotationError as exc:
                    error = exc.api_error.response.get("error")
                    self._refused[team] = bot.bot_token  # said once, not asked again
                    log.warning(
                        "Slack refused to refresh the token of workspace %s (%s)", team, error
                    )
                    return None
                if rotated is not None:
                    await self._installations.async_save_bot(rotated)
                    bot = rotated
            found = self._clients.get(team)
            if found is None or found.token != bot.bot_token:
                if found is not None:  # a run may still use it: closed at the end
                    self._retired.append(found)
                found = self._clients[team] = create_slack_client(bot.bot_token, self._api_base)
                for configure in self._configure:
                    configure(found)
            return found

    async def close(self) -> None:
        for client in [*self._clients.values(), *self._retired]:
            await close_slack_client(client)
        self._clients.clear()
        self._retired.clear()


class PerWorkspace(Generic[T]):
    """Something that calls Slack, built for each workspace from its client, and built again
    when the workspace's token changes: what it calls, it calls with that workspace's token."""

    def __init__(self, workspaces: Workspaces, build: Callable[[AsyncWebClient], T]) -> None:
        self._workspaces = workspaces
        self._build = build
        # By client, not by team: with SLACK_BOT_TOKEN every team has the one client, and
        # one of each part, as before there were many workspaces.
        self._built: dict[int, tuple[AsyncWebClient, T]] = {}
        self._teams: dict[str, int] = {}  # team -> its client's key in `_built`
        self._replaced: list[T] = []

    async def of(self, team: str) -> T | None:
        """`team`'s; None when the app is not installed there (any more)."""
        client = await self._workspaces.client(team)
        if client is None:
            return None
        before = self._teams.get(team)
        if before is not None and before != id(client) and before in self._built:
            self._replaced.append(self._built.pop(before)[1])  # its token was refreshed
        self._teams[team] = id(client)
        return self.for_client(client)

    def for_client(self, client: AsyncWebClient) -> T:
        """The one built with `client` (a part of another built with it shares this)."""
        found = self._built.get(id(client))
        if found is None:
            found = self._built[id(client)] = (client, self._build(client))
        return found[1]

    def built(self) -> list[T]:
        """Every one built so far (to close them)."""
        return [*(part for _, part in self._built.values()), *self._replaced]
