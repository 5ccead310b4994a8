"""A click on a memory note's Undo button: acknowledged once handled (the removal is recorded
before Slack hears back; a click lost to a crash is not acked)."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck
from slack_sdk.web.async_client import AsyncWebClient

from assistant.intake.memory_undo import MemoryUndo


async def handle_memory_undo(
    ack: AsyncAck,
    body: dict[str, Any],
    action: dict[str, Any],
    client: AsyncWebClient,
    memory_undo: MemoryUndo,
) -> None:
    await memory_undo.clicked(body, action, client)
    await ack()
