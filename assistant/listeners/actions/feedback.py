"""A click on an answer's feedback buttons: recorded, then acknowledged; no run starts."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp

from assistant.panel.feedback import Feedback
from assistant.run.progress.feedback_buttons import ACTION_ID


def register(app: AsyncApp, feedback: Feedback) -> None:
    @app.action(ACTION_ID)
    async def handle_feedback(ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        # Like an event, acknowledged once recorded: a click lost to a crash is not acked.
        await feedback.clicked(body, action)
        await ack()
