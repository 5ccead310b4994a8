"""A click on an MCP server's question's buttons, and its form sent: acknowledged once handled
(the answer is in the store before Slack hears back); an invalid form is acknowledged with its
fields' errors, and stays open."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck
from slack_sdk.web.async_client import AsyncWebClient

from assistant.intake.questions import QuestionButtons


async def handle_question(
    ack: AsyncAck,
    body: dict[str, Any],
    action: dict[str, Any],
    client: AsyncWebClient,
    questions: QuestionButtons,
) -> None:
    await questions.clicked(body, action, client)
    await ack()


async def handle_question_form(
    ack: AsyncAck,
    body: dict[str, Any],
    view: dict[str, Any],
    client: AsyncWebClient,
    questions: QuestionButtons,
) -> None:
    errors = await questions.submitted(body, view, client)
    if errors:
        await ack(response_action="errors", errors=errors)
    else:
        await ack()
