"""A click on an answer's feedback buttons: recorded, then acknowledged; no run starts."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck

from assistant.panel.feedback import Feedback


async def handle_feedback(
    ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], feedback: Feedback
) -> None:
    # Like an event, acknowledged once recorded: a click lost to a crash is not acked.
    await feedback.clicked(body, action)
    await ack()
