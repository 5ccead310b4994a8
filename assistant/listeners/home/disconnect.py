"""A Disconnect button on the App Home: the clicker's own connection to an MCP server revoked
(`assistant.panel.home.AppHome.disconnect_from`)."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncAck
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.panel.home import AppHome
from assistant.slack.connection import slack_reason

log = logging.getLogger(__name__)


async def handle_disconnect(
    ack: AsyncAck,
    body: dict[str, Any],
    action: dict[str, Any],
    client: AsyncWebClient,
    home: AppHome,
) -> None:
    await ack()
    team, user = body["team"]["id"], body["user"]["id"]
    try:
        await home.disconnect_from(client, team, user, str(action.get("value") or ""))
    except SlackApiError as exc:  # the tab shows the change when next opened
        log.warning("cannot show %s their App Home again: %s", user, slack_reason(exc))
