"""A person opened the assistant panel: the thread's log begins, and they are greeted."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncSay
from slack_bolt.context.set_suggested_prompts.async_set_suggested_prompts import (
    AsyncSetSuggestedPrompts,
)
from slack_sdk.web.async_client import AsyncWebClient

from assistant.panel.events import Panel


async def handle_thread_started(
    body: dict[str, Any],
    event: dict[str, Any],
    say: AsyncSay,
    set_suggested_prompts: AsyncSetSuggestedPrompts,
    client: AsyncWebClient,
    panel: Panel,
) -> None:
    await panel.opened(body, event, say, set_suggested_prompts, client)
