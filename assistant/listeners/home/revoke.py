"""The App Home's Revoke button of a grant (docs/slack-features.md#grants)."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncAck
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.panel.home import AppHome
from assistant.slack.connection import slack_reason

log = logging.getLogger(__name__)


async def handle_revoke_grant(
    ack: AsyncAck,
    body: dict[str, Any],
    action: dict[str, Any],
    client: AsyncWebClient,
    home: AppHome,
) -> None:
    await ack()
    team, user = body["team"]["id"], body["user"]["id"]
    value = action.get("value")
    # The grant's id, from the button (a forged one names none: nothing is revoked).
    if not (isinstance(value, str) and value.isdigit() and len(value) < 12):
        log.warning("a Revoke click by %s that names no grant was ignored", user)
        return
    try:
        await home.revoke(client, team, user, int(value))
    except SlackApiError as exc:
        log.warning("cannot show %s the App Home: %s", user, slack_reason(exc))
