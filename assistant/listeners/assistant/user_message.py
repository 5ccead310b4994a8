"""A person's message in a thread of the app's DM (the panel's threads among them): recorded
and answered like a DM; the first one of a panel thread gives it its title."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncBoltContext
from slack_bolt.context.set_title.async_set_title import AsyncSetTitle

from assistant.intake.event_shapes import person_message
from assistant.intake.events import EventRecorder
from assistant.listeners.events.filters import from_person
from assistant.panel.events import Panel


async def handle_user_message(
    body: dict[str, Any],
    event: dict[str, Any],
    context: AsyncBoltContext,
    set_title: AsyncSetTitle,
    events: EventRecorder,
    panel: Panel,
) -> None:
    if not from_person(event, events.settings) or not (message := person_message(body, event)):
        return
    # The title first: the run the record starts creates the session with it.
    titled = await panel.claim_title(body["team_id"], event)
    await events.message(
        message, context.bot_user_id, mention=False, received_at=context.get("received_at")
    )
    if titled is not None:
        await panel.show_title(*titled, set_title)
