"""Bolt's `authorize` for installs through OAuth: each request's token and bot from what the
installation store holds (docs/architecture.md#many-workspaces).

Bolt's own (`AsyncInstallationStoreAuthorize`) asks Slack `auth.test` before every event: while
Slack's Web API fails, it takes the workspace for uninstalled, answers Slack 200 with "please
reinstall", and the event is lost (Slack sends no retry for a 200). Here nothing is asked of
Slack: the installation holds the bot's user id, bot id and team already. Only a token about to
expire is refreshed (`Workspaces.installation`, one refresh at a time across processes).

What each outcome answers Slack:
- installed, a token that works: the request goes on;
- no installation for the team (never installed, or uninstalled): None, and Bolt answers 200
  (nothing will ever take the event);
- installed, but the store cannot be read, or the token has expired and Slack failed to refresh
  it: an exception, so Bolt answers 500 (`assistant.listeners.errors`) and Slack sends the event
  again later;
- installed, the token expired and its refresh refused: None (200), with one line saying so:
  nothing works there until the app is installed again."""

from __future__ import annotations

import logging
from contextvars import ContextVar

from slack_bolt.authorization import AuthorizeResult
from slack_bolt.authorization.async_authorize import AsyncAuthorize
from slack_bolt.context.async_context import AsyncBoltContext

from assistant.slack.workspaces import TokenUnavailable, Workspaces

log = logging.getLogger(__name__)

# The line Bolt's authorization middleware adds when `authorize` gives None.
_NOT_FOUND = "Although the app should be installed into this workspace"
_said_why: ContextVar[bool] = ContextVar("installation_refused", default=False)


class InstallationAuthorize(AsyncAuthorize):
    def __init__(self) -> None:
        self.workspaces: Workspaces | None = None  # set once the app's client is made

    async def __call__(
        self,
        *,
        context: AsyncBoltContext,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None,
        actor_enterprise_id: str | None = None,
        actor_team_id: str | None = None,
        actor_user_id: str | None = None,
    ) -> AuthorizeResult | None:
        assert self.workspaces is not None
        if team_id is None:
            return None  # an org-wide install: the manifest asks for none
        try:
            bot = await self.workspaces.installation(team_id)
        except TokenUnavailable as exc:
            if exc.may_pass:
                raise  # 500: Slack sends it again
            log.warning("an event of workspace %s refused: %s", team_id, exc)
            _said_why.set(True)
            return None
        if bot is None:
            return None
        return AuthorizeResult(
            enterprise_id=bot.enterprise_id,
            team_id=bot.team_id,
            bot_user_id=bot.bot_user_id,
            bot_id=bot.bot_id,
            bot_token=bot.bot_token,
            bot_scopes=bot.bot_scopes,
            user_id=user_id,
        )


class _OneLine(logging.Filter):
    """Where `authorize` said why it gave None, Bolt's second line about a missing
    installation would only mislead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.getMessage().startswith(_NOT_FOUND) and _said_why.get())


logging.getLogger("slack_bolt.AsyncMultiTeamsAuthorization").addFilter(_OneLine())
