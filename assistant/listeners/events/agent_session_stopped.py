"""The stop button of an agent session pressed: the thread's run stops, wherever it runs."""

from __future__ import annotations

from typing import Any

from assistant.intake.stops import StopButton


async def handle_agent_session_stopped(
    body: dict[str, Any], event: dict[str, Any], stops: StopButton
) -> None:
    await stops.pressed(body, event)
