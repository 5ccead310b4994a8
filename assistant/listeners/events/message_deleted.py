"""A deletion of a recorded message becomes a system entry."""

from __future__ import annotations

from typing import Any

from assistant.intake.event_shapes import DeletionFields, checked
from assistant.intake.events import EventRecorder


async def handle_message_deleted(
    body: dict[str, Any], event: dict[str, Any], events: EventRecorder
) -> None:
    deletion = checked(body, event, DeletionFields)
    if deletion is not None:
        await events.deleted(deletion.team, event, deletion.event_id)
