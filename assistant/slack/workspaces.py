"""Each workspace's Web API client: the one place a Slack call's token comes from
(docs/architecture.md#many-workspaces).

With SLACK_BOT_TOKEN, one client serves the one workspace, as it always did. Installed through
OAuth (SLACK_CLIENT_ID), each workspace's bot token is its installation's, read from the
installation store when asked (so an uninstall in another process counts at once), and each
token has a client of its own. A team without an installation has no client: nothing is
called for it.

A rotating token (docs.slack.dev "Token rotation") is refreshed when it is asked for within
`rotate_minutes` of its expiry, by one task of one process at a time: Slack takes each refresh
token once, so two refreshes of the same token would leave the second refused. The refresh is
decided again under the lock (another process may have saved a fresh token meanwhile), and a
refresh Slack refuses is followed by one more read of the installation for the same reason.
A refresh that fails (Slack down, or the refresh token refused) keeps the old token while it
works; once it has expired, `TokenUnavailable` says the workspace cannot be called now."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from slack_sdk.errors import SlackTokenRotationError
from slack_sdk.oauth.installation_store import Bot
from slack_sdk.oauth.token_rotation.async_rotator import AsyncTokenRotator
from slack_sdk.web.async_client import AsyncWebClient

from assistant.slack.client import close_slack_client, create_slack_client
from assistant.slack.connection import SLACK_UNREACHED, failure_reason, may_pass
from assistant.slack.installs import Installations

log = logging.getLogger(__name__)

T = TypeVar("T")

# After a refresh failed, the old token (while it works) is used this long before the next try:
# a request must not wait out the client's retries on every event while Slack is down.
REFRESH_RETRY_SECONDS = 30.0


class TokenUnavailable(Exception):
    """The app is installed in the workspace, but no token of it works now: it has expired and
    Slack did not refresh it. `may_pass`: Slack failed in a way that may pass (a refused
    refresh token lasts until the app is installed there again)."""

    def __init__(self, team: str, reason: str, may_pass: bool) -> None:
        super().__init__(f"the bot token of workspace {team} has expired and {reason}")
        self.may_pass = may_pass


class Workspaces:
    """The client of each workspace (by team id)."""

    def __init__(
        self,
        api_base: str,
        single: AsyncWebClient | None = None,
        installations: Installations | None = None,
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
        self._failed: dict[str, _FailedRefresh] = {}  # by team: its last refresh, if it failed
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
        """`team`'s client; None when the app is not installed there (any more). Raises
        TokenUnavailable (installed, no token that works now) and the store's errors."""
        if self._single is not None:
            return self._single
        bot = await self.installation(team)
        if bot is None:
            return None
        assert bot.bot_token is not None
        found = self._clients.get(team)
        if found is None or found.token != bot.bot_token:
            if found is not None:  # a run may still use it: closed at the end
                self._retired.append(found)
            found = self._clients[team] = create_slack_client(bot.bot_token, self._api_base)
            for configure in self._configure:
                configure(found)
        return found

    async def installation(self, team: str) -> Bot | None:
        """`team`'s installation with a bot token that works now (refreshed first if it
        expires soon); None when the app is not installed there. Raises as `client` does."""
        assert self._installations is not None
        async with self._locks[team]:  # one task of this process at a time
            bot = await self._find(team)
            if bot is None or not self._expiring(bot):
                return bot
            failed = self._failed.get(team)
            if failed is not None and failed.stands_for(bot):
                return self._still_valid(team, bot, failed.failure)
            async with self._installations.refreshing(team):  # one process at a time
                bot = await self._find(team)  # another process may have refreshed it
                if bot is None or not self._expiring(bot):
                    return bot
                return await self._refresh(team, bot)

    async def _find(self, team: str) -> Bot | None:
        assert self._installations is not None
        bot = await self._installations.async_find_bot(enterprise_id=None, team_id=team)
        return bot if bot is not None and bot.bot_token else None

    def _expiring(self, bot: Bot) -> bool:
        if self._rotator is None or bot.bot_refresh_token is None:
            return False
        expires_at = bot.bot_token_expires_at
        return expires_at is not None and expires_at <= time.time() + self._rotate_minutes * 60

    async def _refresh(self, team: str, bot: Bot) -> Bot:
        assert self._installations is not None and self._rotator is not None
        failure: BaseException
        try:
            rotated = await self._rotator.perform_bot_token_rotation(
                bot=bot, minutes_before_expiration=self._rotate_minutes
            )
        except SlackTokenRotationError as exc:
            failure = exc.api_error
        except SLACK_UNREACHED as exc:
            failure = exc
        else:
            if rotated is None:  # not expiring after all (its clock moved on)
                return bot
            await self._installations.async_save_bot(rotated)
            self._failed.pop(team, None)
            return rotated
        if not may_pass(failure):
            # Refused: a process that took no lock (an older version) may have spent the
            # refresh token and saved the new one, or the app was installed again meanwhile.
            again = await self._find(team)
            if again is not None and again.bot_refresh_token != bot.bot_refresh_token:
                return again
        before = self._failed.get(team)
        retry_at = time.monotonic() + REFRESH_RETRY_SECONDS
        self._failed[team] = _FailedRefresh(bot.bot_refresh_token, failure, retry_at)
        if before is None or before.refresh_token != bot.bot_refresh_token:
            # Said once per refresh token, not at each try.
            log.warning("%s the token of workspace %s (%s)", _verb(failure), team, _reason(failure))
        return self._still_valid(team, bot, failure)

    def _still_valid(self, team: str, bot: Bot, failure: BaseException) -> Bot:
        """`bot` while its token works; TokenUnavailable once it has expired."""
        if (bot.bot_token_expires_at or 0) > time.time():
            return bot
        reason = f"{_verb(failure).lower()} it ({_reason(failure)})"
        raise TokenUnavailable(team, reason, may_pass(failure))

    async def close(self) -> None:
        for client in [*self._clients.values(), *self._retired]:
            await close_slack_client(client)
        self._clients.clear()
        self._retired.clear()


@dataclass(frozen=True)
class _FailedRefresh:
    refresh_token: str | None
    failure: BaseException
    retry_at: float  # monotonic; a refusal is not tried again (the same refresh token)

    def stands_for(self, bot: Bot) -> bool:
        """Whether `bot` is not to be refreshed now: a refused refresh token stays refused;
        after a failure that may pass, it is tried again after a while."""
        if self.refresh_token != bot.bot_refresh_token:
            return False
        return not may_pass(self.failure) or time.monotonic() < self.retry_at


def _verb(failure: BaseException) -> str:
    return "could not refresh" if may_pass(failure) else "Slack refused to refresh"


def _reason(failure: BaseException) -> str:
    """Slack's error, or why Slack could not be reached (never the refresh token)."""
    return failure_reason(failure).removeprefix("Slack answered ")


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
