"""A channel's settings modal submitted: kept, or its errors shown in the modal."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncAck
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.panel.home import AppHome
from assistant.slack.connection import slack_reason

log = logging.getLogger(__name__)


async def handle_settings_submitted(
    ack: AsyncAck,
    body: dict[str, Any],
    view: dict[str, Any],
    client: AsyncWebClient,
    home: AppHome,
) -> None:
    team, user = body["team"]["id"], body["user"]["id"]
    errors = await home.submit(client, team, user, view)
    if errors:
        await ack(response_action="errors", errors=errors)
        return
    await ack()  # the modal closes
    try:
        await home.show(client, team, user)  # the tab shows what was kept
    except SlackApiError as exc:
        log.warning("cannot show %s the App Home: %s", user, slack_reason(exc))
