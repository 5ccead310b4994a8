"""The App Home: the home tab opened, its Edit and page buttons, and the settings modal
submitted (`assistant.panel.home`)."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.panel.home import AppHome
from assistant.panel.home_views import EDIT_ACTION, MODAL, PAGE_ACTION
from assistant.slack.connection import slack_reason

log = logging.getLogger(__name__)


async def on_home_tab(event: dict[str, Any]) -> bool:
    # Bolt runs the first listener that matches an event: each tab's listener matches its tab.
    return event.get("tab") == "home"


def register(app: AsyncApp, home: AppHome) -> None:
    @app.event("app_home_opened", matchers=[on_home_tab])
    async def handle_app_home_opened(
        event: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient
    ) -> None:
        if not context.team_id:
            return
        try:
            await home.show(client, context.team_id, event["user"])
        except SlackApiError as exc:  # Slack sends the event again on the next opening
            log.warning("cannot show %s the App Home: %s", event["user"], slack_reason(exc))

    @app.action(EDIT_ACTION)
    async def handle_edit(
        ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        team, user = body["team"]["id"], body["user"]["id"]
        try:
            await home.edit(client, team, user, action.get("value") or "", body["trigger_id"])
        except SlackApiError as exc:  # an expired trigger: the person clicks again
            log.warning("cannot open the settings for %s: %s", user, slack_reason(exc))

    @app.action(PAGE_ACTION)
    async def handle_page(
        ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
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

    @app.view(MODAL)
    async def handle_settings_submitted(
        ack: AsyncAck, body: dict[str, Any], view: dict[str, Any], client: AsyncWebClient
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
