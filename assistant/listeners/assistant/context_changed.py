"""The person looks at another channel while the assistant panel is open."""

from __future__ import annotations

from typing import Any

from assistant.panel.events import Panel


# Replaces Bolt's default, which keeps the context in a message's metadata: here it is
# recorded in the log and kept in the thread's side metadata, by workspace.
async def handle_thread_context_changed(
    body: dict[str, Any], event: dict[str, Any], panel: Panel
) -> None:
    await panel.context_changed(body, event)
