"""A person opened one of the app's tabs: on the Messages tab, the suggested prompts."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncBoltContext

from assistant.panel.messages_tab import MessagesTab


async def on_messages_tab(event: dict[str, Any]) -> bool:
    # Bolt runs the first listener that matches an event: each tab's listener matches its tab.
    return event.get("tab") == "messages"


async def handle_messages_tab_opened(
    body: dict[str, Any],
    event: dict[str, Any],
    context: AsyncBoltContext,
    messages_tab: MessagesTab,
) -> None:
    # Bolt gives set_suggested_prompts for the Messages tab only, bound to the DM.
    await messages_tab.opened(body, event, context.get("set_suggested_prompts"), context.client)
