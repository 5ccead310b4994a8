"""The stop button of an agent session pressed: the thread's run stops, wherever it runs."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from assistant.intake.stops import StopButton


def register(app: AsyncApp, stops: StopButton) -> None:
    @app.event("agent_session_stopped")
    async def handle_agent_session_stopped(body: dict[str, Any], event: dict[str, Any]) -> None:
        await stops.pressed(body, event)
