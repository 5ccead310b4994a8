"""The "Ask Aya about this" message shortcut (manifest.yml `features.shortcuts`): the message it
is used on is recorded like a mention by the person who used it, then acknowledged; its
answer comes in the message's thread."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncBoltContext

from assistant.intake.event_shapes import shortcut_message
from assistant.intake.events import EventRecorder

CALLBACK_ID = "ask_about_this"  # the manifest's shortcut


async def handle_ask_about_this(
    ack: AsyncAck, body: dict[str, Any], context: AsyncBoltContext, events: EventRecorder
) -> None:
    # Like an event, acknowledged once recorded.
    message = shortcut_message(body)
    if message is not None:
        await events.asked_about(message, context.bot_user_id, context.get("received_at"))
    await ack()
