"""Message subtypes the bot has nothing to record for (joins, topic changes, …).

Acknowledged quietly: an unhandled event would be answered 404 and retried by Slack.
"""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from assistant.intake.events import EventRecorder


def register(app: AsyncApp, events: EventRecorder) -> None:
    @app.event("message")
    async def handle_other_message() -> None:
        return None
