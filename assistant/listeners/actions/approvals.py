"""A click on an approval's buttons, and the Deny button's form sent: acknowledged once handled
(a decision is recorded before Slack hears back; a click lost to a crash is not acked)."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck
from slack_sdk.web.async_client import AsyncWebClient

from assistant.intake.approvals import ApprovalButtons


async def handle_approval(
    ack: AsyncAck,
    body: dict[str, Any],
    action: dict[str, Any],
    client: AsyncWebClient,
    approvals: ApprovalButtons,
) -> None:
    await approvals.clicked(body, action, client)
    await ack()


async def handle_deny_reason(
    ack: AsyncAck,
    body: dict[str, Any],
    view: dict[str, Any],
    client: AsyncWebClient,
    approvals: ApprovalButtons,
) -> None:
    await approvals.submitted(body, view, client)
    await ack()  # the form closes
