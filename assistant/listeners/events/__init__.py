"""Events API listeners."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from assistant.intake.events import EventRecorder
from assistant.listeners.events import (
    app_context_changed,
    app_mention,
    message,
    message_changed,
    message_deleted,
    other_messages,
)


def register(app: AsyncApp, events: EventRecorder) -> None:
    # Order matters: Bolt runs the first listener that matches, the catch-all goes last.
    for module in (
        app_mention,
        app_context_changed,
        message,
        message_changed,
        message_deleted,
        other_messages,
    ):
        module.register(app, events)
