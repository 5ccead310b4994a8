"""Interactivity: block actions (the feedback buttons, an approval's Allow / Deny, the Connect
link of a sign-in to an MCP server)."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from assistant.listeners.actions.approvals import handle_approval
from assistant.listeners.actions.connect import handle_connect
from assistant.listeners.actions.feedback import handle_feedback
from assistant.run.approvals.entries import ACTION_IDS as APPROVAL
from assistant.run.approvals.sign_in import CONNECT
from assistant.run.progress.feedback_buttons import ACTION_ID as FEEDBACK


def register(app: AsyncApp) -> None:
    app.action(FEEDBACK)(handle_feedback)
    for action_id in APPROVAL:
        app.action(action_id)(handle_approval)
    app.action(CONNECT)(handle_connect)
