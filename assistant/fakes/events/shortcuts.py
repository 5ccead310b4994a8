"""The `message_action` payload Slack sends when a person uses a message shortcut (docs.slack.dev
"Message shortcuts"): the shortcut's `callback_id`, who used it, the channel, and the message it
was used on. Over HTTP it arrives form-encoded and signed like a block action
(`assistant.fakes.events.panel.signed_interaction_request`); over Socket Mode as an
`interactive` envelope (`FakeSlack.send_envelope(payload, type="interactive")`).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from assistant.fakes import ids


def message_action(
    message: dict[str, Any],
    *,
    callback_id: str,
    user: str = ids.USER_ID,
    channel: str = ids.CHANNEL_ID,
    team: str = ids.TEAM_ID,
) -> dict[str, Any]:
    """`user` uses the shortcut `callback_id` on `message` (as Slack stores it: `ts`, `text`,
    `user`, and `thread_ts` when it is in a thread)."""
    return {
        "type": "message_action",
        "token": "fake-verification-token",
        "action_ts": f"{time.time():.6f}",
        "team": {"id": team, "domain": "fake"},
        "user": {"id": user, "name": "alice", "team_id": team},
        "channel": {"id": channel, "name": "general"},
        "is_enterprise_install": False,
        "enterprise": None,
        "callback_id": callback_id,
        "trigger_id": f"{uuid.uuid4().int % 10**12}.{uuid.uuid4().hex[:24]}",
        "response_url": f"https://hooks.slack.com/app/{team}/{uuid.uuid4().hex[:12]}",
        "message_ts": message["ts"],
        "message": {"type": "message", **message},
    }
