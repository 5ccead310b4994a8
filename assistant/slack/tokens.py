"""Asking Slack at start whether it takes the tokens: `run` and `serve` exit with one clear
message (status 2) when it refuses one, instead of failing on every event afterwards."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.slack.bot_identity import BotIdentity
from assistant.slack.client import close_slack_client, create_slack_client
from assistant.slack.connection import SLACK_UNREACHED, failure_reason, slack_error
from context.urls import shown_url

# What Slack answers for a token that will never work; retrying cannot help.
REFUSED = {
    "invalid_auth",
    "not_authed",
    "not_allowed_token_type",
    "account_inactive",
    "token_revoked",
    "token_expired",
}


async def refused_tokens(
    command: str,
    client: AsyncWebClient,
    app_token: str | None = None,
    identity: BotIdentity | None = None,
) -> list[str]:
    """One line per token Slack refuses (by variable name): the client's bot token, and the
    app-level token if given. Slack unreachable is no refusal: it is said once on stderr, and
    the caller goes on (connecting, or serving, retries until Slack is back). What Slack says
    of the bot token (`auth.test`) is kept in `identity`, so it is asked no more."""
    checks: list[tuple[str, Callable[[], Awaitable[object]]]] = [
        ("SLACK_BOT_TOKEN", client.auth_test)
    ]
    if app_token is not None:
        checks.append(
            ("SLACK_APP_TOKEN", lambda: client.apps_connections_open(app_token=app_token))
        )
    problems = []
    for name, check in checks:
        try:
            answer = await check()
            if name == "SLACK_BOT_TOKEN" and identity is not None:
                identity.remember(answer)
        except SlackApiError as exc:
            error = slack_error(exc)
            if error in REFUSED:
                problems.append(f"{name}: refused by Slack ({error})")
        except SLACK_UNREACHED as exc:
            print(
                f"assistant {command}: cannot reach Slack at {shown_url(client.base_url)} to "
                f"check {name} ({failure_reason(exc)}); going on without the check",
                file=sys.stderr,
                flush=True,
            )
            break  # the next check would only wait as long to fail the same way
    return problems


async def refused_bot_token(
    command: str, token: str, api_base: str, identity: BotIdentity | None = None
) -> list[str]:
    """`refused_tokens` for the bot token, with a client of its own (before the app exists)."""
    client = create_slack_client(token, api_base)
    try:
        return await refused_tokens(command, client, identity=identity)
    finally:
        await close_slack_client(client)
