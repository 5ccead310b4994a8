"""A person's own sign-ins to the `auth: user` MCP servers on their App Home
(docs/slack-features.md#connecting-to-a-tool): each connection (never a token) with a
**Disconnect** button, which revokes it at the server where it can and forgets it here."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from assistant.i18n.words import ENGLISH, Words
from context.storage.mcp_connections import ConnectionRow

DISCONNECT_ACTION = "mcp_disconnect"
MAX_SHOWN = 40  # connections listed (Slack's home tab takes 100 blocks in all)

# `assistant.mcp.signin.tokens.SignIns.disconnect`: (server, team, user) -> revoked or not.
Disconnect = Callable[[str, str, str], Awaitable[bool | None]]


def connection_blocks(
    rows: Sequence[ConnectionRow], words: Words = ENGLISH
) -> list[dict[str, Any]]:
    """The home tab's blocks of a person's connections (none: no blocks)."""
    if not rows:
        return []
    _ = words.gettext
    blocks: list[dict[str, Any]] = [
        {"type": "divider"},
        {"type": "header", "text": {"type": "plain_text", "text": _("Your connected tools")}},
    ]
    for row in rows[:MAX_SHOWN]:
        text = _("*{server}*: connected {at}", server=row.server, at=row.connected_at[:16])
        blocks.append(
            {
                "type": "section",
                "block_id": f"mcp_{row.server}",
                "text": {"type": "mrkdwn", "text": text},
                "accessory": {
                    "type": "button",
                    "action_id": DISCONNECT_ACTION,
                    "text": {"type": "plain_text", "text": _("Disconnect")},
                    "value": row.server,
                },
            }
        )
    return blocks
