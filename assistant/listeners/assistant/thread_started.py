"""A person opened the assistant panel: the thread's log begins, and they are greeted."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAssistant, AsyncSay
from slack_bolt.context.set_suggested_prompts.async_set_suggested_prompts import (
    AsyncSetSuggestedPrompts,
)
from slack_sdk.web.async_client import AsyncWebClient

from assistant.intake.events import EventRecorder
from assistant.panel.events import Panel


def register(assistant: AsyncAssistant, events: EventRecorder, panel: Panel) -> None:
    @assistant.thread_started
    async def handle_thread_started(
        body: dict[str, Any],
        event: dict[str, Any],
        say: AsyncSay,
        set_suggested_prompts: AsyncSetSuggestedPrompts,
        client: AsyncWebClient,
    ) -> None:
        await panel.opened(body, event, say, set_suggested_prompts, client)
