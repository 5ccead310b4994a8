"""An edit of a recorded message becomes a system entry."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp, AsyncBoltContext

from assistant.events import EventRecorder
from assistant.listeners.events.filters import from_person


def register(app: AsyncApp, events: EventRecorder) -> None:
    @app.event({"type": "message", "subtype": "message_changed"})
    async def handle_message_changed(
        body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext
    ) -> None:
        if from_person(event.get("message", {}), events.settings):
            await events.edited(body["team_id"], event, body.get("event_id"), context.bot_user_id)
