"""A mention of the bot in a channel: record it and answer."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp, AsyncBoltContext

from assistant.intake.event_shapes import person_message
from assistant.intake.events import EventRecorder
from assistant.listeners.events.filters import from_person


def register(app: AsyncApp, events: EventRecorder) -> None:
    @app.event("app_mention")
    async def handle_app_mention(
        body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext
    ) -> None:
        if from_person(event, events.settings) and (message := person_message(body, event)):
            await events.message(
                message, context.bot_user_id, mention=True, received_at=context.get("received_at")
            )
