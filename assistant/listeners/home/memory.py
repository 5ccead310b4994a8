"""Channel memory on the App Home (`assistant.panel.home_memory`): a memory's Edit button
(its modal opened), its Delete button, and the modal submitted; each checked again in
`assistant.panel.home.AppHome.changeable_memory`."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncAck
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.panel.home import AppHome
from assistant.slack.connection import slack_reason

log = logging.getLogger(__name__)


async def handle_memory_edit(
    ack: AsyncAck,
    body: dict[str, Any],
    action: dict[str, Any],
    client: AsyncWebClient,
    home: AppHome,
) -> None:
    await ack()
    team, user = body["team"]["id"], body["user"]["id"]
    try:
        await home.open_memory(client, team, user, action.get("value"), body["trigger_id"])
    except SlackApiError as exc:  # an expired trigger: the person clicks again
        log.warning("cannot open a memory for %s: %s", user, slack_reason(exc))


async def handle_memory_delete(
    ack: AsyncAck,
    body: dict[str, Any],
    action: dict[str, Any],
    client: AsyncWebClient,
    home: AppHome,
) -> None:
    await ack()
    team, user = body["team"]["id"], body["user"]["id"]
    try:
        await home.delete_memory(client, team, user, action.get("value"))
    except SlackApiError as exc:  # the tab shows the change when next opened
        log.warning("cannot show %s the App Home: %s", user, slack_reason(exc))


async def handle_memory_submitted(
    ack: AsyncAck,
    body: dict[str, Any],
    view: dict[str, Any],
    client: AsyncWebClient,
    home: AppHome,
) -> None:
    team, user = body["team"]["id"], body["user"]["id"]
    errors = await home.submit_memory(client, team, user, view)
    if errors:
        await ack(response_action="errors", errors=errors)
        return
    await ack()
    try:
        await home.show(client, team, user)
    except SlackApiError as exc:
        log.warning("cannot show %s the App Home: %s", user, slack_reason(exc))
