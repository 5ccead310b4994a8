"""Interactivity: block actions (the feedback buttons)."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from assistant.listeners.actions import feedback as feedback_buttons
from assistant.panel.feedback import Feedback


def register(app: AsyncApp, feedback: Feedback) -> None:
    feedback_buttons.register(app, feedback)
