"""A click on a routine proposal's Confirm or Cancel: acknowledged once handled (the decision
is recorded before Slack hears back; a click lost to a crash is not acked)."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck
from slack_sdk.web.async_client import AsyncWebClient

from assistant.intake.routine_buttons import RoutineButtons


async def handle_routine_button(
    ack: AsyncAck,
    body: dict[str, Any],
    action: dict[str, Any],
    client: AsyncWebClient,
    routine_buttons: RoutineButtons,
) -> None:
    await routine_buttons.clicked(body, action, client)
    await ack()
