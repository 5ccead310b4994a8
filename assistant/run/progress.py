"""What a run shows while it works (docs/architecture.md#the-agent-loop): the :eyes: reaction
on the message being answered; in a thread of the assistant panel, Slack's status instead
(`assistant.run.panel_status`), decided by the thread's side metadata so that a resumed run
knows it too."""

from __future__ import annotations

import logging

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.run.panel_status import PanelStatus
from assistant.slack.connection import slack_reason
from context.storage import ThreadKey

log = logging.getLogger(__name__)

PROGRESS_REACTION = "eyes"


async def show_progress(
    client: AsyncWebClient | None,
    panel_status: PanelStatus | None,
    key: ThreadKey,
    message_ts: str,
    working: bool,
    in_panel: bool = False,
) -> None:
    """Show (`working`) or take back that the run works on the message `message_ts`."""
    if client is None:
        return  # a replay: nobody to show it to
    react = client.reactions_add if working else client.reactions_remove
    try:
        if in_panel and panel_status is not None:
            await panel_status.show(key, working)
        else:
            await react(channel=key.channel, timestamp=message_ts, name=PROGRESS_REACTION)
    except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
        # Progress is a courtesy: failing to show it must not fail the run.
        log.info("showing progress failed in %s: %s", key, slack_reason(exc))
