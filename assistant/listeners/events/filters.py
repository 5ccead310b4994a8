"""Which events come from a person (docs/log-format.md#peoples-messages)."""

from __future__ import annotations

from typing import Any

from assistant.settings import Settings


def from_person(message: dict[str, Any], settings: Settings) -> bool:
    """Bolt already drops the bot's own events; other bots are ignored unless configured."""
    if not message.get("user"):
        return False
    is_bot = bool(message.get("bot_id")) or message.get("subtype") == "bot_message"
    return not is_bot or settings.assistant_answer_bots
