"""Which events come from a person (docs/log-format.md#peoples-messages)."""

from __future__ import annotations

from typing import Any

from assistant.intake.bot_exchanges import from_bot
from assistant.settings.environment import Settings


def from_person(message: dict[str, Any], settings: Settings) -> bool:
    """Bolt already drops the bot's own events; other bots are ignored unless configured."""
    if not message.get("user"):
        return False
    return not from_bot(message) or settings.answers.bots
