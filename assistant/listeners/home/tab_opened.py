"""The App Home's home tab opened: its first page of channel settings."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.panel.home import AppHome
from assistant.slack.connection import slack_reason

log = logging.getLogger(__name__)


async def on_home_tab(event: dict[str, Any]) -> bool:
    # Bolt runs the first listener that matches an event: each tab's listener matches its tab.
    return event.get("tab") == "home"


async def handle_home_tab_opened(
    event: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient, home: AppHome
) -> None:
    if not context.team_id:
        return
    try:
        await home.show(client, context.team_id, event["user"])
    except SlackApiError as exc:  # Slack sends the event again on the next opening
        log.warning("cannot show %s the App Home: %s", event["user"], slack_reason(exc))
