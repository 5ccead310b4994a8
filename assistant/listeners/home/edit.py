"""A channel's Edit button on the App Home: its settings modal opened."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncAck
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.panel.home import AppHome
from assistant.slack.connection import slack_reason

log = logging.getLogger(__name__)


async def handle_edit(
    ack: AsyncAck,
    body: dict[str, Any],
    action: dict[str, Any],
    client: AsyncWebClient,
    home: AppHome,
) -> None:
    await ack()
    team, user = body["team"]["id"], body["user"]["id"]
    try:
        await home.edit(client, team, user, action.get("value") or "", body["trigger_id"])
    except SlackApiError as exc:  # an expired trigger: the person clicks again
        log.warning("cannot open the settings for %s: %s", user, slack_reason(exc))
