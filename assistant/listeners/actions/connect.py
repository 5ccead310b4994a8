"""A click on a **Connect <server>** link button: Slack opens the link in the person's browser
and tells the app of the click too; there is nothing to do but acknowledge it (the sign-in
completes at the HTTP app's callback: assistant/intake/sign_ins.py)."""

from __future__ import annotations

from slack_bolt.async_app import AsyncAck


async def handle_connect(ack: AsyncAck) -> None:
    await ack()
