"""A person renamed a thread's agent session: the title is kept as theirs."""

from __future__ import annotations

from typing import Any

from assistant.panel.session_titles import SessionTitles


async def handle_agent_session_title_changed(
    body: dict[str, Any], event: dict[str, Any], session_titles: SessionTitles
) -> None:
    await session_titles.changed(body, event)
