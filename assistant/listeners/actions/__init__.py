"""Interactivity: block actions (the feedback buttons, an approval's Allow / Deny, a memory
note's Undo)."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from assistant.listeners.actions.approvals import handle_approval
from assistant.listeners.actions.feedback import handle_feedback
from assistant.listeners.actions.memory import handle_memory_undo
from assistant.run.approvals.entries import ACTION_IDS as APPROVAL
from assistant.run.progress.feedback_buttons import ACTION_ID as FEEDBACK
from assistant.run.tools.memory_notice import UNDO as MEMORY_UNDO


def register(app: AsyncApp) -> None:
    app.action(FEEDBACK)(handle_feedback)
    for action_id in APPROVAL:
        app.action(action_id)(handle_approval)
    app.action(MEMORY_UNDO)(handle_memory_undo)
