"""Who the bot is (`auth.test`), learned once and kept, as Bolt's `authorize`
(docs/architecture.md#slack-and-the-model).

Bolt's own single-workspace authorization asks `auth.test` on every request until one
succeeds, inside the request: with Slack's Web API down, each event got an HTTP 500 and a
traceback, and was not recorded. Here an event never waits for Slack: the identity comes from
`serve`'s and `run`'s check at start, or else is asked for when the first event comes, which
waits for the answer at most `WAIT_SECONDS`; while Slack does not answer (asked again at most
once per `RETRY_SECONDS`, in the background), events are recorded without it (a mention is
still a mention; only the `<@bot>` at the start of its text is left in)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any

from slack_bolt.authorization import AuthorizeResult
from slack_bolt.authorization.async_authorize import AsyncAuthorize
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.logger.messages import warning_token_skipped
from slack_sdk.web.async_client import AsyncWebClient

from assistant.slack.connection import SLACK_FAILURES, failure_reason, slack_reason

log = logging.getLogger(__name__)

RETRY_SECONDS = 30.0  # between asks while Slack does not answer
WAIT_SECONDS = 1.0  # how long a request waits for an ask under way


class BotIdentity(AsyncAuthorize):
    """Bolt's `authorize` for the one workspace of SLACK_BOT_TOKEN."""

    def __init__(self, token: str, known: Mapping[str, Any] | None = None) -> None:
        self._token = token
        self._known = dict(known) if known else None
        self.client: AsyncWebClient | None = None  # to ask with, once the app has made it
        self._next_try = 0.0
        self._asking: asyncio.Task[None] | None = None

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
    ) -> AuthorizeResult:
        if self._known is None and self.client is not None:
            asking = self._asking is not None and not self._asking.done()
            if not asking and time.monotonic() >= self._next_try:
                self._next_try = time.monotonic() + RETRY_SECONDS
                self._asking = asyncio.create_task(self._ask(self.client))
            if self._asking is not None and not self._asking.done():
                # Slack answers in milliseconds when it is up; when it is not, the event goes
                # on without the answer long before Slack's 3 s.
                await asyncio.wait({self._asking}, timeout=WAIT_SECONDS)
        known = self._known or {}
        return AuthorizeResult(
            enterprise_id=enterprise_id,
            team_id=team_id,
            user_id=user_id,
            bot_token=self._token,
            bot_id=known.get("bot_id"),
            bot_user_id=known.get("user_id"),
        )

    def serves(self, team: str) -> bool:
        """Whether the token is `team`'s (its workspace as `auth.test` said; any while
        unknown, and any of an Enterprise Grid org for an org-wide install)."""
        known = self._known or {}
        if known.get("is_enterprise_install"):  # an org-wide token: every workspace of it
            return True
        return known.get("team_id") in (None, team)

    def remember(self, answer: object) -> None:
        """Keep what `auth.test` answered (a slack-sdk response)."""
        data = getattr(answer, "data", None)
        if isinstance(data, dict) and data.get("user_id"):
            self._known = dict(data)

    async def _ask(self, client: AsyncWebClient) -> None:
        try:
            self.remember(await client.auth_test())
        except SLACK_FAILURES as exc:
            log.warning(
                "cannot ask Slack who the bot is (%s); events are recorded meanwhile",
                failure_reason(exc),
            )


class _TokenIsUsed(logging.Filter):
    """Given `authorize`, Bolt warns that the token will be ignored: here the authorize gives
    that very token, so the warning would only mislead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != warning_token_skipped()


# Bolt's own logger for AsyncApp (slack_bolt.logger.get_bolt_logger), where it warns.
logging.getLogger("slack_bolt.AsyncApp").addFilter(_TokenIsUsed())


async def bot_user_of(client: AsyncWebClient) -> str | None:
    """The bot's user id, asked of Slack (`auth.test`); None when Slack does not answer."""
    try:
        return (await client.auth_test()).get("user_id")
    except SLACK_FAILURES as exc:
        log.info("auth.test failed: %s", slack_reason(exc))
        return None
