"""Interactivity: block actions (the feedback buttons, an approval's Allow / Deny)."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from assistant.intake.approvals import ApprovalButtons
from assistant.listeners.actions import approvals as approval_buttons
from assistant.listeners.actions import feedback as feedback_buttons
from assistant.panel.feedback import Feedback


def register(app: AsyncApp, feedback: Feedback, approvals: ApprovalButtons) -> None:
    feedback_buttons.register(app, feedback)
    approval_buttons.register(app, approvals)
