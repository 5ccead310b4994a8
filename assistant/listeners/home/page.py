"""The App Home's page buttons: another page of channels."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncAck
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.panel.home import AppHome
from assistant.slack.connection import slack_reason

log = logging.getLogger(__name__)


async def handle_page(
    ack: AsyncAck,
    body: dict[str, Any],
    action: dict[str, Any],
    client: AsyncWebClient,
    home: AppHome,
) -> None:
    await ack()
    team, user = body["team"]["id"], body["user"]["id"]
    value = action.get("value")
    # The page's number, from the button (a forged one: the first page).
    page = int(value) if isinstance(value, str) and value.isdigit() and len(value) < 6 else 0
    try:
        await home.show(client, team, user, page)
    except SlackApiError as exc:
        log.warning("cannot show %s the App Home: %s", user, slack_reason(exc))
