"""Bolt listeners, one handler per file; `register` wires them all."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from assistant.intake.events import EventRecorder
from assistant.intake.stops import StopButton
from assistant.listeners.actions import register as register_actions
from assistant.listeners.assistant import register as register_assistant
from assistant.listeners.errors import register as register_errors
from assistant.listeners.events import agent_session_stopped
from assistant.listeners.events import register as register_events
from assistant.panel.events import Panel
from assistant.panel.feedback import Feedback


def register(
    app: AsyncApp, events: EventRecorder, panel: Panel, feedback: Feedback, stops: StopButton
) -> None:
    register_assistant(app, events, panel)  # a middleware: it sees DM threads' messages first
    register_events(app, events)
    agent_session_stopped.register(app, stops)
    register_actions(app, feedback)
    register_errors(app)
