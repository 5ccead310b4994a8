"""A message in a DM, or in a thread the bot takes part in."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncBoltContext

from assistant.intake.event_shapes import person_message
from assistant.intake.events import EventRecorder
from assistant.listeners.events.filters import from_person

# Subtypes that are still a person writing in the thread.
PERSON_SUBTYPES = (None, "file_share", "thread_broadcast")


async def handle_message(
    body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext, events: EventRecorder
) -> None:
    if from_person(event, events.settings) and (message := person_message(body, event)):
        await events.message(
            message, context.bot_user_id, mention=False, received_at=context.get("received_at")
        )
