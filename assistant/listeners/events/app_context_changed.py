"""The person, talking to the agent, now views something else in Slack."""

from __future__ import annotations

from typing import Any

from assistant.intake.event_shapes import ContextChangedFields, checked
from assistant.intake.events import EventRecorder


async def handle_app_context_changed(
    body: dict[str, Any], event: dict[str, Any], events: EventRecorder
) -> None:
    if (found := checked(body, event, ContextChangedFields)) is not None:
        await events.viewing_changed(found.team, event)
