"""The person looks at another channel while the assistant panel is open."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAssistant

from assistant.intake.events import EventRecorder
from assistant.panel.events import Panel


def register(assistant: AsyncAssistant, events: EventRecorder, panel: Panel) -> None:
    # Replaces Bolt's default, which keeps the context in a message's metadata: here it is
    # recorded in the log and kept in the thread's side metadata, by workspace.
    @assistant.thread_context_changed
    async def handle_thread_context_changed(body: dict[str, Any], event: dict[str, Any]) -> None:
        await panel.context_changed(body, event)
