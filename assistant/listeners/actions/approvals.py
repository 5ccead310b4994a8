"""A click on an approval's Allow or Deny button: acknowledged once handled (a decision is
recorded before Slack hears back; a click lost to a crash is not acked)."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from assistant.intake.approvals import ApprovalButtons
from assistant.run.tools.approvals import ACTION_IDS


def register(app: AsyncApp, approvals: ApprovalButtons) -> None:
    for action_id in ACTION_IDS:

        @app.action(action_id)
        async def handle_approval(
            ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
        ) -> None:
            await approvals.clicked(body, action, client)
            await ack()
