"""A person renamed a thread's agent session: the title is kept as theirs."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from assistant.panel.session_titles import SessionTitles


def register(app: AsyncApp, titles: SessionTitles) -> None:
    @app.event("agent_session_title_changed")
    async def handle_agent_session_title_changed(
        body: dict[str, Any], event: dict[str, Any]
    ) -> None:
        await titles.changed(body, event)
