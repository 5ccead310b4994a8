"""Message subtypes the bot has nothing to record for (joins, topic changes, …).

Acknowledged quietly: an unhandled event would be answered 404 and retried by Slack.
"""

from __future__ import annotations


async def handle_other_message() -> None:
    return None
