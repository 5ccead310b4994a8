"""A mention of the bot in a channel: record it and answer."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncBoltContext

from assistant.intake.event_shapes import person_message
from assistant.intake.events import EventRecorder
from assistant.listeners.events.filters import from_person


async def handle_app_mention(
    body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext, events: EventRecorder
) -> None:
    if from_person(event, events.settings) and (message := person_message(body, event)):
        await events.message(
            message, context.bot_user_id, mention=True, received_at=context.get("received_at")
        )
