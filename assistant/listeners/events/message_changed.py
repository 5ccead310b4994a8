"""An edit of a recorded message becomes a system entry."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncBoltContext

from assistant.intake.event_shapes import EditFields, checked
from assistant.intake.events import EventRecorder
from assistant.listeners.events.filters import from_person


async def handle_message_changed(
    body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext, events: EventRecorder
) -> None:
    edit = checked(body, event, EditFields)
    if edit is not None and from_person(event["message"], events.settings):
        await events.edited(edit.team, event, edit.event_id, context.bot_user_id)
